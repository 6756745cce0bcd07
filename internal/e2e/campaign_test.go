package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Randomized crash campaigns against consumer-usage: many SIGKILLs
// at random moments and at each crash point, then the usage in the store is
// compared with the topic. Guarded mode must end exact; naive mode's drift
// must be explained, crash by crash.
//
// A campaign is seeded: the seed is printed, KRL_CAMPAIGN_SEED replays the
// same plan (the moments are the plan's; what a moment hits depends on
// timing, which is the point).
//
// The figures for the README (t.Logf):
//
//	go test ./internal/e2e -run 'TestCrashCampaign' -v -count=1

const (
	campaignRandomCrashes = 30 // SIGKILLs at random moments
	campaignPerPoint      = 5  // crashes at each crash point
)

type stepKind string

const (
	randomCrash     stepKind = "random"
	afterDelta      stepKind = "after-delta"
	afterCheckpoint stepKind = "after-checkpoint"
)

// campaignStep is one crash of consumer-usage and its restart.
type campaignStep struct {
	kind stepKind
	// before: how long it runs before the SIGKILL (random crashes). Short
	// ones hit the start and the recovery, long ones the steady state.
	before time.Duration
	// dead: how long it stays dead before the restart (messages pile up).
	dead time.Duration
	// settle: crash points are armed once it has caught up (steady state),
	// or right after its start (during the recovery).
	settle bool
}

func campaignSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano() % 1_000_000_000
	if s := os.Getenv("KRL_CAMPAIGN_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("KRL_CAMPAIGN_SEED=%q: %v", s, err)
		}
	}
	t.Logf("campaign seed %d (replay the plan with KRL_CAMPAIGN_SEED=%d)", seed, seed)
	return seed
}

func campaignPlan(seed int64) []campaignStep {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b726c))
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo)) * time.Millisecond }
	var steps []campaignStep
	for range campaignRandomCrashes {
		s := campaignStep{kind: randomCrash, before: ms(300, 1500)}
		if rng.IntN(3) == 0 {
			s.before = ms(20, 300)
		}
		steps = append(steps, s)
	}
	for range campaignPerPoint {
		steps = append(steps, campaignStep{kind: afterDelta}, campaignStep{kind: afterCheckpoint})
	}
	rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for i := range steps {
		if rng.IntN(2) == 0 {
			steps[i].dead = ms(50, 500)
		}
		steps[i].settle = rng.IntN(2) == 0
	}
	return steps
}

func countKinds(steps []campaignStep) map[stepKind]int {
	n := map[stepKind]int{}
	for _, s := range steps {
		n[s.kind]++
	}
	return n
}

// campaignScript is the plan as a dashboard script. A restart is "start",
// which fails (and fails the script, naming the line) if consumer-usage is
// still running: every planned crash really happened.
func campaignScript(steps []campaignStep) string {
	var b strings.Builder
	b.WriteString("wait-caught-up 60s\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "# crash %d: %s\n", i+1, s.kind)
		switch s.kind {
		case randomCrash:
			fmt.Fprintf(&b, "wait %s\ncrash consumer-usage\n", s.before)
		default:
			if s.settle {
				b.WriteString("wait-caught-up 60s\n")
			}
			// It fires at the next message reaching the point: within
			// milliseconds once messages flow, but a consumer-usage just
			// restarted first loads its checkpoints, which on the embedded
			// store costs a read of every usage record per sensor (seconds
			// on a loaded machine), so the script waits for the crash
			// itself; it fails if none comes within 60 s.
			fmt.Fprintf(&b, "crash-at consumer-usage %s\nwait-down consumer-usage 60s\n", s.kind)
		}
		if s.dead > 0 {
			fmt.Fprintf(&b, "wait %s\n", s.dead)
		}
		b.WriteString("start consumer-usage\n")
	}
	b.WriteString("pause producer\nwait-caught-up 90s\nquit\n")
	return b.String()
}

// TestCrashCampaignGuarded runs the campaign through the dashboard: a
// generated --script crashes consumer-usage (guarded) at random moments
// and arms each crash point with the script's crash-at, then pauses the
// producer, waits caught up and quits. The report's drift must be exactly
// 0 for every sensor, the store must hold exactly the usage computed from
// the topic, and consumer-current's state must be the topic's truth.
func TestCrashCampaignGuarded(t *testing.T) {
	seed := campaignSeed(t)
	steps := campaignPlan(seed)
	script := campaignScript(steps)
	d := newDashboard(t)
	start := time.Now()
	d.startHeadless(script, "--usage-mode", "guarded", "--interval", "100ms", "--seed", fmt.Sprint(seed%1000+1))
	code := d.waitExit(5 * time.Minute)
	took := time.Since(start)
	if code != 0 {
		t.Logf("script:\n%s", script)
		t.Fatalf("dashboard exited %d (a failed script action is named in its log below)\n%s", code, d.child.StderrTail(30))
	}
	r := d.readReport()
	kinds := countKinds(steps)
	u := r.proc(t, "consumer-usage")
	if u.Crashes != len(steps) || u.Starts != len(steps)+1 || u.Mode != "guarded" {
		t.Errorf("consumer-usage %+v, want guarded, %d crashes, %d starts", u, len(steps), len(steps)+1)
	}
	for _, p := range []stepKind{afterDelta, afterCheckpoint} {
		re := regexp.MustCompile(`consumer-usage crash point ` + string(p) + ` reached at partition \d+ offset \d+`)
		if n := len(re.FindAllString(d.stderr(), -1)); n != kinds[p] {
			t.Errorf("%d crashes at %s in the event log, the plan armed %d", n, p, kinds[p])
		}
	}
	checkProcesses(t, r, d, map[string][2]int{"consumer-usage": {len(steps) + 1, len(steps)}})
	rt := d.readRunTruth()
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
	checkNoCauseAtAnyPoll(t, d)
	if t.Failed() {
		t.Logf("script:\n%s", script)
	}
	var all store.Totals
	for _, e := range rt.Expected {
		all.HoursCents += e.HoursCents
		all.KmCents += e.KmCents
		all.Records += e.Records
	}
	t.Logf("guarded campaign: %d crashes (%d random, %d after-delta, %d after-checkpoint) in %s; %d messages; "+
		"usage %.2f h, %.2f km in %d records; drift 0.00 h, 0.00 km on all %d sensors (report and independent)",
		len(steps), kinds[randomCrash], kinds[afterDelta], kinds[afterCheckpoint], took.Round(time.Second),
		rt.Topic.Count(), all.Hours(), all.Km(), all.Records, len(rt.Expected))
}

// ---- naive campaign: the roles run directly, observed at every crash ----

// crashObs is what a crash left behind, read while consumer-usage is dead:
// where the next run starts (the group's commits), the checkpoints and the
// usage totals in the store.
type crashObs struct {
	step    campaignStep
	point   *status.Event // the CrashPoint event of a crash point
	commits map[int32]int64
	cps     map[string]store.Checkpoint
	totals  map[string]store.Totals
}

// TestCrashCampaignNaive runs the same plan against consumer-usage in naive
// mode (the article's code), started directly with the harness so the
// test can look at the commits and the store at every crash, while the
// consumer is dead. It then checks that the drift is explained.
//
// The rule, from consumers/usage's naive semantics. For one sensor, a run
// of the consumer starts with the durable checkpoint K (its in-memory
// last state) and consumes the sensor's messages in offset order from the
// group's committed offset C. Each message records odo(m) − odo(last state)
// when positive and becomes the last state (checkpoint overwritten, even
// backwards). So a run that processed messages b..e records
//
//	odo(e) − min(odo(b), odo(K))
//
// where b is the first message at or after C (or K if C is unknown: with no
// commit it starts at latest, past K). Odometers are exact hundredths, so
// sums telescope exactly, and over the whole campaign
//
//	drift = Σ_runs [odo(K) − odo(b)]⁺   replay: processed, not committed
//	      + Σ_crashes d(e)               a usage record written, its checkpoint not
//
// The first term is non-zero only for a sensor with messages in [C, K) at
// a crash: processed (checkpointed) but not committed. The second only for
// the sensor whose message was between the two writes when the crash hit
// (always so at after-delta). The test recovers e at every crash from the
// store (the totals must match one of: nothing processed, processed
// through the new checkpoint, or one record beyond it), checks the crash
// points against their events, and asserts that the drift measured
// independently (store − expected from the topic) equals the sum exactly,
// is never negative, and is non-zero only for exposed sensors.
func TestCrashCampaignNaive(t *testing.T) {
	seed := campaignSeed(t)
	steps := campaignPlan(seed)
	in := Stack(t)
	group := "demo-usage-e2e-" + RandomSuffix()
	db := connectStore(t, in.Mongo)

	startUsage := func() *Child { return in.Role(t, "consumer", "usage", "--mode", "naive", "--group", group) }
	use := startUsage()
	use.Await("consumer-usage assigned", isType(status.Assigned), 60*time.Second)
	prod := in.Role(t, "producer", "--interval", "100ms", "--seed", fmt.Sprint(seed%1000+1))
	prod.Await("producer publishing", func(e status.Event) bool { return e.Type == status.Progress && e.Produced > 0 }, 60*time.Second)

	began := time.Now()
	var obs []crashObs
	for i, s := range steps {
		o := crashObs{step: s}
		switch s.kind {
		case randomCrash:
			// The random moment of the crash (not a synchronisation).
			time.Sleep(s.before)
			use.Kill()
		default:
			base := use.URL(30 * time.Second)
			if s.settle {
				use.Await("consumer-usage processing", func(e status.Event) bool {
					return e.Type == status.Progress && e.Processed > 0
				}, 30*time.Second)
			}
			mark := use.Mark()
			armCrash(t, use, mark, base, string(s.kind))
			ev := use.AwaitFrom(mark, "crash point "+string(s.kind), isType(status.CrashPoint), 30*time.Second)
			if ev.Point != string(s.kind) {
				t.Fatalf("crash %d: armed %s, crashed at %q", i+1, s.kind, ev.Point)
			}
			o.point = &ev
			if code, ok := use.WaitExit(10 * time.Second); !ok || code != -int(syscall.SIGKILL) {
				t.Fatalf("crash %d at %s: exited=%v code %d, want killed by SIGKILL", i+1, s.kind, ok, code)
			}
		}
		o.commits, o.cps, o.totals = observeDead(t, in, group, db)
		obs = append(obs, o)
		if s.dead > 0 {
			time.Sleep(s.dead) // stays dead a while: messages pile up (not a synchronisation)
		}
		use = startUsage()
	}
	campaign := time.Since(began)

	pauseProducer(t, prod)
	tp := ReadTopic(t, in.Brokers, in.Topic)
	truth := LastStates(tp)
	if truth.Invalid != 0 {
		t.Fatalf("the producer wrote %d invalid records", truth.Invalid)
	}
	cps := awaitCheckpoints(t, in.Mongo, truth)
	AwaitCondition(t, "consumer-usage committed up to the watermarks", 60*time.Second, 100*time.Millisecond, func() error {
		c := Committed(t, in.Brokers, group, in.Topic)
		for p, hw := range tp.HighWatermarks {
			if hw > 0 && c[p] != hw {
				return fmt.Errorf("partition %d committed %d, watermark %d", p, c[p], hw)
			}
		}
		return nil
	})
	final := crashObs{cps: cps, totals: usageTotals(t, db)}
	expected := ExpectedUsage(tp, cps)

	m := explainNaive(t, tp, obs, final)
	var drift [2]int64
	var over, exposedNotOver []string
	for _, id := range sortedIDs(truth.Sensors) {
		got, want := final.totals[id], expected[id]
		dh, dk := got.HoursCents-want.HoursCents, got.KmCents-want.KmCents
		drift[0] += dh
		drift[1] += dk
		pred := m.replay[id].add(m.halfWritten[id])
		if dh != pred.h || dk != pred.k {
			t.Errorf("%s: drift %d h-cents %d km-cents, explained %d/%d (replay %+v, half-written %+v)",
				id, dh, dk, pred.h, pred.k, m.replay[id], m.halfWritten[id])
		}
		if dh < 0 || dk < 0 {
			t.Errorf("%s: negative drift %d/%d cents: naive lost usage", id, dh, dk)
		}
		if dh > 0 || dk > 0 {
			over = append(over, id)
			if !m.exposed[id] {
				t.Errorf("%s: drift %d/%d cents, but no crash left it processed-and-uncommitted or half-written", id, dh, dk)
			}
		} else if m.exposed[id] {
			exposedNotOver = append(exposedNotOver, id)
		}
	}
	named := checkCampaignCauses(t, tp, db, cps, final.totals, expected)
	kinds := countKinds(steps)
	var truthTotal store.Totals
	for _, e := range expected {
		truthTotal.HoursCents += e.HoursCents
		truthTotal.KmCents += e.KmCents
	}
	t.Logf("naive campaign: %d crashes (%d random, %d after-delta, %d after-checkpoint) in %s; %d messages; true usage %.2f h, %.2f km; "+
		"drift +%.2f h, +%.2f km over %d of %d sensors %v (replay of processed-uncommitted messages: %.2f h, %.2f km at %d crashes; "+
		"usage written without its checkpoint: %.2f h, %.2f km at %d crashes); exposed without drift (idle): %v",
		len(steps), kinds[randomCrash], kinds[afterDelta], kinds[afterCheckpoint], campaign.Round(time.Second), tp.Count(),
		truthTotal.Hours(), truthTotal.Km(), float64(drift[0])/100, float64(drift[1])/100, len(over), len(truth.Sensors), over,
		float64(m.replayTotal.h)/100, float64(m.replayTotal.k)/100, m.replayCrashes,
		float64(m.halfTotal.h)/100, float64(m.halfTotal.k)/100, m.halfCrashes, exposedNotOver)
	t.Logf("naive campaign: the drift named by %v", named)
}

// checkCampaignCauses attributes the campaign's drift as the dashboard
// does (audit.Attribution over the store's records and an audit of the
// topic read back) and checks it: every sensor's causes add up to its
// drift measured here (store − topic), and each cause's expected delta is
// the topic's. It returns the causes counted by kind.
func checkCampaignCauses(t *testing.T, tp Topic, db *store.Store, cps map[string]store.Checkpoint,
	stored, expected map[string]store.Totals) map[audit.CauseKind]int {
	t.Helper()
	l := audit.NewLedger()
	for _, r := range tp.Records {
		l.Track(r.Partition)
		l.Add(r.Partition, r.Offset, r.Key, r.Value)
	}
	truth := l.Snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	covered, err := db.UsageCoverage(ctx)
	if err != nil {
		t.Fatalf("usage coverage: %v", err)
	}
	cut := audit.ExpectedForCut(truth, covered, cps)
	a := audit.NewAttribution()
	from, upTo := a.Need(truth, cut)
	recs, err := db.UsageRecordsFrom(ctx, from, upTo)
	if err != nil {
		t.Fatalf("usage records: %v", err)
	}
	causes, bad := a.Apply(truth, cut, from, recs)
	if len(bad) > 0 {
		t.Errorf("the causes of %v do not add up to their drift", bad)
	}
	deltas := messageDeltas(tp, cps)
	named := map[audit.CauseKind]int{}
	for id, want := range expected {
		var h, k int64
		for _, c := range causes[id] {
			named[c.Kind]++
			dh, dk := c.Drift()
			h, k = h+dh, k+dk
			if d := deltas[id][c.Offset]; d.HoursCents != c.Expected.HoursCents || d.KmCents != c.Expected.KmCents {
				t.Errorf("%s: cause p%d@%d expects %+v, the topic yields %+v", id, c.Partition, c.Offset, c.Expected, d)
			}
		}
		got := stored[id]
		if h != got.HoursCents-want.HoursCents || k != got.KmCents-want.KmCents {
			t.Errorf("%s: causes add up to %d/%d cents, the drift is %d/%d", id, h, k,
				got.HoursCents-want.HoursCents, got.KmCents-want.KmCents)
		}
	}
	return named
}

// armCrash arms point on consumer-usage. The process announces the arm on
// its status stream before replying; a reply lost to the crash it armed
// (the connection cut as the process dies) counts once that announcement,
// read from mark on, is there.
func armCrash(t *testing.T, use *Child, mark int, base, point string) {
	t.Helper()
	resp, err := http.Post(base+"/crash-at?point="+point, "", nil)
	if err != nil {
		if _, aerr := use.WaitEventFrom(mark, func(e status.Event) bool {
			return e.Type == status.CrashPointArmed && e.Point == point
		}, 5*time.Second); aerr == nil {
			t.Logf("POST /crash-at: %v after the arm was announced: armed", err)
			return
		}
		t.Fatalf("POST /crash-at: %v, and no arm announced", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /crash-at?point=%s: %s", point, resp.Status)
	}
}

func connectStore(t *testing.T, uri string) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = st.Close(ctx)
	})
	return st
}

func usageTotals(t *testing.T, st *store.Store) map[string]store.Totals {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tot, err := st.UsageTotals(ctx)
	if err != nil {
		t.Fatalf("usage totals: %v", err)
	}
	return tot
}

// observeDead reads the commits, checkpoints and usage totals a crash left.
// A write the consumer sent just before it died may still be landing, so
// it reads until two reads 100 ms apart agree.
func observeDead(t *testing.T, in *Infra, group string, st *store.Store) (map[int32]int64, map[string]store.Checkpoint, map[string]store.Totals) {
	t.Helper()
	read := func() (map[int32]int64, map[string]store.Checkpoint, map[string]store.Totals, string) {
		c := Committed(t, in.Brokers, group, in.Topic)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cps, err := st.LoadCheckpoints(ctx)
		if err != nil {
			t.Fatalf("checkpoints: %v", err)
		}
		tot := usageTotals(t, st)
		key := fmt.Sprint(c)
		for _, id := range sortedIDs(cps) {
			key += fmt.Sprintf(" %s@%d/%d", id, cps[id].Partition, cps[id].Offset)
		}
		for _, id := range sortedIDs(tot) {
			key += fmt.Sprintf(" %s=%+v", id, tot[id])
		}
		return c, cps, tot, key
	}
	c, cps, tot, key := read()
	AwaitCondition(t, "the dead consumer's commits and writes settled", 10*time.Second, 100*time.Millisecond, func() error {
		c2, cps2, tot2, key2 := read()
		if key2 != key {
			c, cps, tot, key = c2, cps2, tot2, key2
			return fmt.Errorf("still changing")
		}
		return nil
	})
	return c, cps, tot
}

func sortedIDs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// amount is usage in cents.
type amount struct{ h, k int64 }

func (a amount) add(b amount) amount { return amount{a.h + b.h, a.k + b.k} }
func (a amount) sub(b amount) amount { return amount{a.h - b.h, a.k - b.k} }
func (a amount) positive() bool      { return a.h > 0 || a.k > 0 }

// sensorMsg is one message of a sensor: where it is and its odometers.
type sensorMsg struct {
	partition int32
	offset    int64
	odo       amount
}

type naiveExplanation struct {
	replay, halfWritten    map[string]amount
	exposed                map[string]bool
	replayTotal, halfTotal amount
	replayCrashes          int
	halfCrashes            int
}

// explainNaive replays the campaign through the rule above, run by run and
// sensor by sensor, checking each run's recorded usage against the store.
func explainNaive(t *testing.T, tp Topic, obs []crashObs, final crashObs) naiveExplanation {
	t.Helper()
	msgs := map[string][]sensorMsg{}
	where := map[[2]int64]string{} // partition, offset -> sensor
	for _, r := range tp.Records {
		m, err := telemetry.Decode(r.Key, r.Value)
		if err != nil {
			continue
		}
		msgs[m.SensorID] = append(msgs[m.SensorID], sensorMsg{r.Partition, r.Offset, amount{cents(m.Odometry.HoursTot), cents(m.Odometry.KmTot)}})
		where[[2]int64{int64(r.Partition), r.Offset}] = m.SensorID
	}
	index := func(id string, cp store.Checkpoint, ok bool) int {
		if !ok {
			return -1
		}
		for i, m := range msgs[id] {
			if m.partition == cp.Partition && m.offset == cp.Offset {
				return i
			}
		}
		t.Fatalf("%s: checkpoint at %d/%d is not a message of it", id, cp.Partition, cp.Offset)
		return -1
	}
	ex := naiveExplanation{replay: map[string]amount{}, halfWritten: map[string]amount{}, exposed: map[string]bool{}}
	replayAt := map[int]bool{}
	halfAt := map[int]bool{}

	// Run r starts after obs[r-1] (run 0 after nothing) and ends at obs[r]
	// (the last run at final).
	ends := append(append([]crashObs{}, obs...), final)
	for id, ms := range msgs {
		first := -1
		if cp, ok := final.cps[id]; ok {
			for i, m := range ms {
				if m.partition == cp.FirstPartition && m.offset == cp.FirstOffset {
					first = i
				}
			}
		}
		k := -1 // the durable checkpoint at the start of the run
		var before amount
		for r, end := range ends {
			cp, ok := end.cps[id]
			k2 := index(id, cp, ok)
			got := amount{end.totals[id].HoursCents, end.totals[id].KmCents}
			recorded := got.sub(before)
			before = got

			// b: the run's first message of the sensor, from the commit.
			b := -1
			if r > 0 && len(ms) > 0 {
				if c, ok := obs[r-1].commits[ms[0].partition]; ok {
					b = len(ms) // none yet: the run reads only newer messages
					for i, m := range ms {
						if m.offset >= c {
							b = i
							break
						}
					}
				}
			}
			var low amount
			switch {
			case k >= 0 && b >= 0 && b < k:
				low = ms[b].odo
			case k >= 0:
				low = ms[k].odo
			case first >= 0:
				low = ms[first].odo // first checkpoint ever: the baseline
			}
			var replayed amount
			if k >= 0 && b >= 0 && b < k {
				replayed = ms[k].odo.sub(ms[b].odo)
			}
			// Which e (last message recorded by the run) explains what the
			// store gained? Nothing, through the new checkpoint, or one more
			// record whose checkpoint was not written.
			// The message after the new checkpoint in this run: the next
			// one, or b if the run checkpointed nothing and started past K.
			next := k2 + 1
			if k2 == k && b > k {
				next = b
			}
			var e int
			var half amount
			switch {
			case k2 == k && recorded == (amount{}):
				// Nothing new: at most the checkpoint's own message again
				// (a zero delta), which a crash point may have hit.
				e, replayed = k2, amount{}
			case k2 >= 0 && recorded == ms[k2].odo.sub(low):
				e = k2
			case k2 >= 0 && next < len(ms) && recorded == ms[next].odo.sub(low):
				e = next
				half = ms[next].odo.sub(ms[k2].odo)
			case k2 == k && k >= 0 && b < 0 && firstReadUncommitted(ms, k, low, recorded) > k:
				// Nothing committed, so the run began at the end of the
				// topic (latest): its first message of the sensor, some way
				// past the checkpoint, was recorded from the checkpoint's
				// reading and the crash came before its checkpoint.
				e = firstReadUncommitted(ms, k, low, recorded)
				half = ms[e].odo.sub(ms[k2].odo)
			default:
				t.Errorf("%s, run %d: the store gained %+v cents; the rule allows 0 (checkpoint unchanged at %d), or from %+v to the checkpoint %d, or one message past it (commits %v)",
					id, r, recorded, k, low, k2, commitsOf(obs, r))
				k = k2
				continue
			}
			if r < len(obs) {
				// Crash points: the event names the message the crash hit.
				if p := obs[r].point; p != nil && where[[2]int64{int64(p.Partition), p.Offset}] == id {
					if e < 0 || ms[e].partition != p.Partition || ms[e].offset != p.Offset {
						t.Errorf("%s, crash %d at %s on %d/%d: explained with last message %d", id, r+1, p.Point, p.Partition, p.Offset, e)
					}
					if p.Point == string(afterDelta) && !half.positive() {
						t.Errorf("%s, crash %d at after-delta on %d/%d: no record beyond its checkpoint", id, r+1, p.Partition, p.Offset)
					}
					if p.Point == string(afterCheckpoint) && half.positive() {
						t.Errorf("%s, crash %d at after-checkpoint on %d/%d: a record beyond its checkpoint", id, r+1, p.Partition, p.Offset)
					}
				}
			}
			if replayed.positive() {
				ex.replay[id] = ex.replay[id].add(replayed)
				ex.replayTotal = ex.replayTotal.add(replayed)
				replayAt[r-1] = true
			}
			if half.positive() {
				ex.halfWritten[id] = ex.halfWritten[id].add(half)
				ex.halfTotal = ex.halfTotal.add(half)
				halfAt[r] = true
			}
			// Exposure straight from what the crash left: messages in
			// [commit, checkpoint) will be consumed again, or a record
			// without its checkpoint.
			if r > 0 && k >= 0 && b >= 0 && b < k || half.positive() {
				ex.exposed[id] = true
			}
			k = k2
		}
	}
	ex.replayCrashes, ex.halfCrashes = len(replayAt), len(halfAt)
	return ex
}

func commitsOf(obs []crashObs, r int) any {
	if r == 0 {
		return "none (first run)"
	}
	return obs[r-1].commits
}

// firstReadUncommitted is the message past checkpoint k whose reading minus
// low is exactly what the store gained (-1 when none is): a run with no
// committed offset starts at the end of the topic, so the first message it
// records may lie any way past the checkpoint.
func firstReadUncommitted(ms []sensorMsg, k int, low, recorded amount) int {
	for j := k + 1; j < len(ms); j++ {
		if ms[j].odo.sub(low) == recorded {
			return j
		}
	}
	return -1
}
