package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// rebalanceDelay is the effect delay of the old owner: longer than the new
// owner takes to start, join, be assigned and replay (about 1.2 s here).
const rebalanceDelay = 6 * time.Second

// TestRebalanceInFlight stages the seed's failure timeline (004) on real
// processes: consumer-usage A owns every partition and holds a usage write
// at offset n of partition 2 (its effect delay); B joins the group, the
// coordinator revokes A's partitions and gives partition 2 to B (range
// assignor, static members sorted by instance id), B starts from the
// committed offset and replays n, and only then does A's write reach the
// store. Every step is asserted from the processes' own events, in order;
// then the store is compared with the topic read back. Guarded: A's late
// write is refused as a second effect, drift 0, one usage record per
// message. Naive: the late write adds n's delta a second time, and the
// drift is exactly the late messages' deltas.
//
// One sensor, so every message is on partition 2 (its key's partition),
// the one that moves: the naive loop holds one message at a time, and it
// must be one that the new owner replays.
func TestRebalanceInFlight(t *testing.T) {
	for _, mode := range []lesson.Mode{lesson.Guarded, lesson.Naive} {
		t.Run(string(mode), func(t *testing.T) { rebalanceInFlight(t, mode) })
	}
}

func rebalanceInFlight(t *testing.T, mode lesson.Mode) {
	in := Stack(t)
	group := "demo-usage-rebalance-" + RandomSuffix()
	usage := func(instance string) *Child {
		return in.Role(t, "consumer", "usage", "--mode", string(mode), "--group", group, "--instance-id", instance)
	}
	a := usage("consumer-usage")
	aURL := a.URL(30 * time.Second)
	a.Await("A assigned every partition", func(e status.Event) bool {
		return e.Type == status.Assigned && len(e.Partitions) == Partitions
	}, 60*time.Second)
	prod := in.Role(t, "producer", "--sensors", "1", "--interval", "100ms", "--seed", "404")
	a.Await("A processed 20 messages", func(e status.Event) bool {
		return e.Type == status.Progress && e.Processed >= 20
	}, 60*time.Second)

	// 1. A's write at n is in flight.
	mark := a.Mark()
	postEffectDelay(t, aURL, rebalanceDelay)
	held := a.AwaitFrom(mark, "A holds a write of partition 2", func(e status.Event) bool {
		return e.Type == status.EffectHeld && e.Partition == 2
	}, 30*time.Second)
	n := held.Offset
	t.Logf("1. A holds its write of p2@%d (%d messages) for %s", n, held.Count, rebalanceDelay)

	// 2. B joins: A's partitions are revoked with the write in flight.
	b := usage("consumer-usage-2")
	revoked := a.AwaitFrom(mark, "A revoked", isType(status.Revoked), 30*time.Second)
	if revoked.InFlight < 1 {
		t.Fatalf("A revoked with %d messages in flight, want the held write: %+v", revoked.InFlight, revoked)
	}
	t.Logf("2. A revoked %v at generation %d (member %s), %d messages in flight", revoked.Partitions, revoked.Generation, revoked.Member, revoked.InFlight)

	// 3. B is assigned partition 2 from the durable committed offset, at or
	// before n.
	assigned := b.Await("B assigned partition 2", func(e status.Event) bool {
		return e.Type == status.Assigned && slices.Contains(e.Partitions, 2)
	}, 30*time.Second)
	start := int64(-1)
	for _, p := range assigned.Positions {
		if p.Partition == 2 {
			start = p.Offset
		}
	}
	if start < 0 || start > n {
		t.Fatalf("B starts partition 2 at %d, want a committed offset at or before the in-flight %d (%+v)", start, n, assigned)
	}
	if assigned.Generation <= revoked.Generation {
		t.Errorf("B's generation %d is not after A's revoked generation %d", assigned.Generation, revoked.Generation)
	}
	t.Logf("3. B assigned %v at generation %d, starts p2 at %d", assigned.Partitions, assigned.Generation, start)

	// 4. B replays n (its progress passes it) before A's write lands.
	b.Await("B processed past n", func(e status.Event) bool {
		if e.Type != status.Progress {
			return false
		}
		for _, p := range e.Positions {
			if p.Partition == 2 && p.Offset > n+held.Count {
				return true
			}
		}
		return false
	}, rebalanceDelay)
	if _, err := a.WaitEventFrom(mark, isType(status.LateWrite), 0); err == nil {
		t.Fatalf("A's write landed before B replayed p2@%d: the timeline was not forced", n)
	}
	t.Logf("4. B replayed p2@%d..%d", n, n+held.Count-1)

	// 5. A's write completes, late.
	late := a.AwaitFrom(mark, "A's late write", isType(status.LateWrite), rebalanceDelay+10*time.Second)
	if late.Partition != 2 || late.Offset != n || late.Count != held.Count {
		t.Fatalf("late write %+v, want p2@%d, %d messages", late, n, held.Count)
	}
	if mode == lesson.Guarded && late.Prevented != late.Count {
		t.Fatalf("guarded: %d of A's %d late records refused, want all (B recorded them first)", late.Prevented, late.Count)
	}
	if mode == lesson.Naive && late.Prevented != 0 {
		t.Fatalf("naive: %d refused, want 0 (its records have no identity)", late.Prevented)
	}
	t.Logf("5. A's write of p2@%d landed late: %d messages, %d refused as second effects", n, late.Count, late.Prevented)

	// A keeps running with the partitions it has left; let B move on past
	// A's late checkpoint (naive writes one), then compare with the topic.
	var sofar int64
	for _, e := range b.Events() {
		if e.Type == status.Progress {
			sofar = e.Processed
		}
	}
	b.Await("B processed 20 more", func(e status.Event) bool {
		return e.Type == status.Progress && e.Processed >= sofar+20
	}, 30*time.Second)
	paused := pauseProducer(t, prod)
	tp := ReadTopic(t, in.Brokers, in.Topic)
	if int64(tp.Count()) != paused.Produced {
		t.Fatalf("producer delivered %d, topic holds %d", paused.Produced, tp.Count())
	}
	truth := LastStates(tp)
	cps := awaitCheckpoints(t, in.Mongo, truth)
	want := ExpectedUsage(tp, cps)
	wantRecs := ExpectedRecords(tp, cps)
	var got map[string]store.Totals
	var offsets map[string][]store.RecordSource
	WithStore(t, in.Mongo, func(ctx context.Context, st *store.Store) error {
		var err error
		if got, err = st.UsageTotals(ctx); err != nil {
			return err
		}
		offsets, err = st.UsageOffsets(ctx)
		return err
	})
	if len(want) != 1 {
		t.Fatalf("expected usage for %d sensors, want 1", len(want))
	}
	for id, w := range want {
		g := got[id]
		perMessage := map[store.Position]int{}
		for _, p := range offsets[id] {
			perMessage[p.Position]++
		}
		switch mode {
		case lesson.Guarded:
			if g != w {
				t.Errorf("%s: store %+v, topic %+v: drift %+v", id, g, w, diff(g, w))
			}
			for _, r := range wantRecs[id] {
				if c := perMessage[store.Position{Partition: r.Partition, Offset: r.Offset}]; c != 1 {
					t.Errorf("%s p%d@%d: %d usage records, want 1", id, r.Partition, r.Offset, c)
				}
			}
			if len(offsets[id]) != len(wantRecs[id]) {
				t.Errorf("%s: %d usage records, %d messages with a delta", id, len(offsets[id]), len(wantRecs[id]))
			}
			t.Logf("guarded: %s %d records, drift 0; A prevented %d second effects", id, g.Records, late.Prevented)
		case lesson.Naive:
			// The drift is exactly the late messages' deltas, once more.
			var twice store.Totals
			for _, r := range wantRecs[id] {
				if r.Partition == 2 && r.Offset >= n && r.Offset < n+late.Count {
					d := deltaOf(t, tp, r)
					twice.HoursCents += d.HoursCents
					twice.KmCents += d.KmCents
					twice.Records++
				}
			}
			drift := diff(g, w)
			if drift != twice || drift.Records == 0 {
				t.Errorf("naive drift %+v, want the late write's %+v", drift, twice)
			}
			t.Logf("naive: drift %+v = the late write of p2@%d counted twice", drift, n)
		}
	}
}

func diff(got, want store.Totals) store.Totals {
	return store.Totals{HoursCents: got.HoursCents - want.HoursCents, KmCents: got.KmCents - want.KmCents, Records: got.Records - want.Records}
}

// deltaOf is the usage delta of r against the previous message of its
// sensor on its partition.
func deltaOf(t *testing.T, tp Topic, r Record) store.Totals {
	t.Helper()
	cp := map[string]store.Checkpoint{}
	var prev *Record
	for i := range tp.Records {
		x := tp.Records[i]
		if x.Partition == r.Partition && x.Offset < r.Offset && string(x.Key) == string(r.Key) {
			prev = &tp.Records[i]
		}
	}
	if prev == nil {
		t.Fatalf("no message before p%d@%d", r.Partition, r.Offset)
	}
	id := string(r.Key)
	cp[id] = store.Checkpoint{SensorID: id, FirstPartition: r.Partition, FirstOffset: prev.Offset, Offset: r.Offset, FirstTimestamp: 1}
	return ExpectedUsage(tp, cp)[id]
}

func postEffectDelay(t *testing.T, baseURL string, d time.Duration) {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("%s/effect-delay?delay=%s", baseURL, d), "", nil)
	if err != nil {
		t.Fatalf("POST /effect-delay: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /effect-delay: %s", resp.Status)
	}
}

var lateWriteRe = regexp.MustCompile(`consumer-usage +late write p2@(\d+) \(1 message`)

// TestRebalanceNaiveOnScreen: the same timeline in naive mode, on the
// headless dashboard. One sensor (partition 2), consumer-usage holds each
// write 8 s, a second instance joins and takes partition 2. The report must
// show the damage: consumer-usage's late write, the sensor over-counted by
// exactly that message's delta (computed from the topic read back), on the
// screen's own numbers.
func TestRebalanceNaiveOnScreen(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
effect-delay consumer-usage 8s
wait-held consumer-usage 30s
scale consumer-usage 2
wait-caught-up 90s
effect-delay consumer-usage 0s
scale consumer-usage 1
wait-caught-up 90s     # consumer-usage-2's partition comes back after its session timeout
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "naive", "--sensors", "1", "--interval", "100ms", "--seed", "44")
	if code := d.waitExit(4 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	a := r.proc(t, "consumer-usage")
	if a.Late == nil || *a.Late != 1 || a.Partitions == nil || !slices.Equal(*a.Partitions, []int32{0, 1, 2}) {
		t.Fatalf("consumer-usage late %s, partitions %v: want 1 late write and every partition back", fmtInt(a.Late), fmtParts(a.Partitions))
	}
	if !regexp.MustCompile(`consumer-usage-2 +assigned \[2\] `).MatchString(d.stderr()) {
		t.Fatalf("p2 never moved to consumer-usage-2 in the events")
	}
	m := lateWriteRe.FindStringSubmatch(d.stderr())
	if m == nil {
		t.Fatalf("no late write of partition 2 in the events")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	rt := d.readRunTruth()
	var at *Record
	for i, rec := range rt.Topic.Records {
		if rec.Partition == 2 && rec.Offset == n {
			at = &rt.Topic.Records[i]
		}
	}
	if at == nil {
		t.Fatalf("p2@%d is not in the topic", n)
	}
	want := deltaOf(t, rt.Topic, *at)
	if len(r.Sensors) != 1 || r.Sensors[0].Drift == nil {
		t.Fatalf("report sensors %+v: want one with a drift", r.Sensors)
	}
	s := r.Sensors[0]
	checkDriftCauses(t, r, rt)
	words := checkLateAndStale(t, s, n, want)
	if strings.Contains(d.stderr(), "cannot name the drift's messages") {
		t.Errorf("the dashboard could not name the drift's messages at some poll")
	}
	if !strings.Contains(d.stderr(), "drift named: ") {
		t.Errorf("no timeline line names the drift's causes")
	}
	t.Logf("naive on screen: late write p2@%d, then scaled back: drift %+.2f h / %+.2f km, causes %v",
		n, s.Drift.Hours, s.Drift.Km, words)
}

// checkLateAndStale: the late write's message p2@n (its delta want) is
// counted again, and after p2 came back to consumer-usage a later message
// of p2 carries its stale reading. It returns the causes in words.
func checkLateAndStale(t *testing.T, s reportSens, n int64, want store.Totals) (words []string) {
	t.Helper()
	// The non-atomic window: the late write's message is counted again,
	// once by each owner, and named so.
	var late *reportCause
	for i, c := range s.DriftCauses {
		if c.Partition == 2 && c.Offset == n {
			late = &s.DriftCauses[i]
		}
	}
	if late == nil || late.Kind != "counted-again" || late.Records != 2 ||
		store.Cents(late.RecordedHours) != 2*want.HoursCents || store.Cents(late.RecordedKm) != 2*want.KmCents {
		t.Fatalf("the late write p2@%d (delta %+v): cause %+v, want counted-again twice; causes %+v", n, want, late, s.DriftCauses)
	}
	if s.Verdict != "over-counted" {
		t.Errorf("verdict %q, want over-counted", s.Verdict)
	}
	// Taking p2 back, the naive loop's reading is the one it held when p2
	// left: what consumer-usage-2 recorded meanwhile is recorded again.
	stale := false
	for _, c := range s.DriftCauses {
		words = append(words, fmt.Sprintf("%s p%d@%d %+.2f h", c.Kind, c.Partition, c.Offset, c.RecordedHours-c.ExpectedHours))
		stale = stale || c.Kind == "stale-reading" && c.Partition == 2 && c.Offset > n &&
			strings.HasPrefix(c.Writer, "consumer-usage@") && c.RecordedHours > c.ExpectedHours
	}
	if !stale {
		t.Errorf("no stale reading of consumer-usage's named after it took p2 back: %v", words)
	}
	return words
}

func fmtInt(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}
