package board

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

const u2, u3 = "consumer-usage-2", "consumer-usage-3"

func TestUsageInstanceNames(t *testing.T) {
	if got := UsageInstanceNames(); !slices.Equal(got, []string{Usage, u2, u3}) {
		t.Fatalf("names = %v", got)
	}
	for name, want := range map[string]int{Usage: 1, u2: 2, u3: 3, "consumer-usage-4": 0, "consumer-usage-1": 0,
		"consumer-usage-02": 0, "consumer-current": 0, "consumer-usage-": 0} {
		n, ok := UsageInstanceNumber(name)
		if n != want || ok != (want > 0) {
			t.Errorf("UsageInstanceNumber(%q) = %d, %v; want %d", name, n, ok, want)
		}
	}
}

func TestScaleRowsAddedAfterUsageAndRemoved(t *testing.T) {
	b := newBoard(ProcAdded{Name: u3, At: at(1)}, ProcAdded{Name: u2, At: at(1)})
	want := []string{Producer, Current, Usage, u2, u3, Query}
	if got := b.Names(); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if !b.Scaled() || b.Process(u2).Key != 0 || b.Process(u2).Usage.Instance != 2 {
		t.Fatalf("scaled %v, key %d, instance %d", b.Scaled(), b.Process(u2).Key, b.Process(u2).Usage.Instance)
	}
	b.Apply(ProcRemoved{Name: u3, At: at(2)})
	b.Apply(ProcRemoved{Name: Usage, At: at(2)}) // canonical rows stay
	if got := b.UsageInstances(); !slices.Equal(got, []string{Usage, u2}) {
		t.Fatalf("instances = %v", got)
	}
	b.Apply(ProcRemoved{Name: u2, At: at(3)})
	if b.Scaled() || b.Has(u2) {
		t.Fatal("still scaled after removing consumer-usage-2")
	}
}

// rebalanceInputs: consumer-usage owned every partition; consumer-usage-2
// joins, the group revokes everything and hands out [0 2] and [1].
func rebalanceInputs() []any {
	return []any{
		ProcAdded{Name: u2, At: at(0)},
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0, status.Event{Type: status.Started, Mode: "guarded", Reset: "latest", GroupID: "demo-usage"}),
		ev(Usage, 1, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}, Member: "rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccddeeff", Generation: 6, First: true}),
		ProcStarted{Name: u2, PID: 11, At: at(2)},
		ev(u2, 2, status.Event{Type: status.Started, Mode: "guarded", Reset: "latest", GroupID: "demo-usage"}),
		ev(Usage, 3, status.Event{Type: status.Revoked, Partitions: []int32{0, 1, 2}, Member: "rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccddeeff", Generation: 6, InFlight: 1}),
	}
}

// TestRebalanceTimedFromItsOwnRevoke: an assignment in a later generation
// with no revoke before it (both instances crashed, one started again) is
// not timed from the revoke of an earlier, finished rebalance.
func TestRebalanceTimedFromItsOwnRevoke(t *testing.T) {
	b := newBoard(rebalanceInputs()...)
	b.Apply(ev(Usage, 3.42, status.Event{Type: status.Assigned, Partitions: []int32{2, 0}, Member: "rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccddeeff", Generation: 7}))
	b.Apply(ev(u2, 3.43, status.Event{Type: status.Assigned, Partitions: []int32{1}, Member: "rdkafka-99999999-4b5a-6978-8a9b-00000000abcd", Generation: 7, First: true}))
	// Both instances crash and start again: the group's next generation
	// has no revoke before it, so the revoke at 3 s says nothing about it.
	b.Apply(ProcExited{Name: Usage, PID: 10, At: at(20), Signal: "SIGKILL"})
	b.Apply(ProcExited{Name: u2, PID: 11, At: at(21), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Usage, PID: 12, At: at(40)})
	b.Apply(ev(Usage, 41.6, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}, Member: "rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccddeeff", Generation: 9}))
	if hasEvent(b, Usage, "gen 9, ") || !hasEvent(b, Usage, "assigned [0 1 2] member …ccddeeff gen 9") {
		t.Fatalf("an assignment two crashes after the revoke is timed from it: %v", b.Events())
	}
}

func TestRebalanceRowsEventsAndReport(t *testing.T) {
	b := newBoard(rebalanceInputs()...)
	if p := b.Process(Usage).Usage.Partitions; p == nil || len(p) != 0 {
		t.Fatalf("partitions after revoke = %v, want an empty list", p)
	}
	if !hasEvent(b, Usage, "revoked [0 1 2] gen 6, 1 message in flight") {
		t.Fatalf("no revoke event: %v", b.Events())
	}
	b.Apply(ev(Usage, 3.42, status.Event{Type: status.Assigned, Partitions: []int32{2, 0}, Member: "rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccddeeff", Generation: 7, Millis: 420}))
	b.Apply(ev(u2, 3.43, status.Event{Type: status.Assigned, Partitions: []int32{1}, Member: "rdkafka-99999999-4b5a-6978-8a9b-00000000abcd", Generation: 7, Millis: 430, First: true}))
	if got := b.Process(Usage).Usage.Partitions; !slices.Equal(got, []int32{0, 2}) {
		t.Fatalf("consumer-usage partitions = %v", got)
	}
	if got := b.Process(u2).Usage.Partitions; !slices.Equal(got, []int32{1}) {
		t.Fatalf("consumer-usage-2 partitions = %v", got)
	}
	if !hasEvent(b, u2, "assigned [1] member …0000abcd gen 7, 0.43 s after the revoke") {
		t.Fatalf("no assign event: %v", b.Events())
	}
	if hasEvent(b, u2, "rebalance: assigned") {
		t.Fatal("the old assign line as well")
	}

	// Effects in flight, late, refused; Progress brings the process's own count.
	b.Apply(ev(u2, 4, status.Event{Type: status.EffectDelay, Millis: 8000}))
	b.Apply(ev(u2, 4, status.Event{Type: status.EffectHeld, Partition: 1, Offset: 42, Count: 1, Millis: 8000}))
	b.Apply(ev(u2, 5, status.Event{Type: status.LateWrite, Partition: 1, Offset: 42, Count: 1, Prevented: 1}))
	b.Apply(ev(Usage, 5, status.Event{Type: status.EffectRefused, Partition: 1, Offset: 42, Count: 1}))
	for _, want := range []struct{ proc, text string }{
		{u2, "write p1@42 held 8s (in flight)"},
		{u2, "late write p1@42 (1 message, 1 refused as a second effect)"},
		{Usage, "refused 1 second effect at p1@42"},
		{u2, "holds every usage write 8s"},
	} {
		if !hasEvent(b, want.proc, want.text) {
			t.Errorf("no %s event %q", want.proc, want.text)
		}
	}
	if v := b.Process(u2); v.Usage.Late != 1 || v.Usage.Prevented != 1 || v.Usage.EffectDelay != 8*time.Second {
		t.Fatalf("consumer-usage-2 late %d prevented %d delay %v", v.Usage.Late, v.Usage.Prevented, v.Usage.EffectDelay)
	}
	b.Apply(ev(Usage, 6, status.Event{Type: status.Progress, Prevented: 3, Late: 0}))
	if v := b.Process(Usage); v.Usage.Prevented != 3 {
		t.Fatalf("prevented after progress = %d", v.Usage.Prevented)
	}

	raw, err := json.Marshal(b.Report())
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Processes []map[string]any `json:"processes"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, p := range r.Processes {
		got[p["name"].(string)] = p
	}
	if p := got[u2]; p["partitions"] == nil || p["late"] != 1.0 || p["prevented"] != 1.0 ||
		p["member"] != "rdkafka-99999999-4b5a-6978-8a9b-00000000abcd" || p["generation"] != 7.0 || p["effect_delay_ms"] != 8000.0 {
		t.Fatalf("consumer-usage-2 in the report: %v", p)
	}
	if p := got[Usage]; !strings.Contains(string(raw), `"partitions":[0,2]`) || p["prevented"] != 3.0 {
		t.Fatalf("consumer-usage in the report: %v", p)
	}
	if _, ok := got[Current]["partitions"]; ok {
		t.Fatal("consumer-current has partitions in the report")
	}
	if _, ok := got[Producer]["late"]; ok {
		t.Fatal("producer has late in the report")
	}

	// Exit: it owns nothing; its counts stay until its next start.
	b.Apply(ProcExited{Name: u2, PID: 11, At: at(7), Signal: "SIGKILL"})
	if v := b.Process(u2); v.Usage.Partitions != nil || v.Usage.Late != 1 {
		t.Fatalf("after exit: partitions %v late %d", v.Usage.Partitions, v.Usage.Late)
	}
	if !strings.Contains(string(mustJSON(t, b.Report())), `"name":"consumer-usage-2","state":"crashed"`) {
		t.Fatal("crashed row missing")
	}
	for _, p := range b.Report().Processes {
		if p.Name == u2 && (p.Partitions == nil || len(p.Partitions) != 0) {
			t.Fatalf("report partitions of a dead instance = %#v, want []", p.Partitions)
		}
	}
	b.Apply(ProcStarted{Name: u2, PID: 12, At: at(8)})
	if v := b.Process(u2); v.Usage.Late != 0 || v.Usage.Member != "" || v.Usage.EffectDelay != 0 {
		t.Fatalf("after restart: late %d member %q delay %v", v.Usage.Late, v.Usage.Member, v.Usage.EffectDelay)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Unscaled, consumer-usage's lag is the group's; scaled, each row shows the
// lag of the partitions it owns, and nothing while it owns none.
func TestScaledLagPerOwnedPartitions(t *testing.T) {
	in := append(rebalanceInputs(),
		ev(Usage, 3.5, status.Event{Type: status.Assigned, Partitions: []int32{0, 2}, Member: "m1", Generation: 7}),
		Offsets{At: at(4), HighWatermarks: map[int32]int64{0: 100, 1: 50, 2: 10}},
		Committed{At: at(4), Group: "demo-usage", Offsets: map[int32]int64{0: 90, 1: 45, 2: 10}},
	)
	b := newBoard(in...)
	if l := b.Process(Usage).Lag; !l.Known() || l.Messages != 10 {
		t.Fatalf("consumer-usage lag = %+v, want 10 (partitions 0 and 2)", l)
	}
	if l := b.Process(u2).Lag; l.Known() {
		t.Fatalf("consumer-usage-2 owns nothing yet, lag = %+v", l)
	}
	if l := b.GroupLag(); l.Messages != 15 {
		t.Fatalf("group lag = %+v", l)
	}
	b.Apply(ev(u2, 5, status.Event{Type: status.Assigned, Partitions: []int32{1}, Member: "m2", Generation: 7}))
	if l := b.Process(u2).Lag; !l.Known() || l.Messages != 5 {
		t.Fatalf("consumer-usage-2 lag = %+v, want 5", l)
	}
	b.Apply(ProcExited{Name: u2, PID: 11, At: at(6), Deliberate: true})
	if l := b.Process(u2).Lag; !l.Down {
		t.Fatalf("stopped consumer-usage-2 lag = %+v, want down", l)
	}
	b.Apply(ProcRemoved{Name: u2, At: at(7)})
	if l := b.Process(Usage).Lag; l.Messages != 15 {
		t.Fatalf("back to one instance: lag = %+v, want the group's 15", l)
	}
}

func TestEffectDelaySetIsTheNextStartsDelay(t *testing.T) {
	b := newBoard(ProcAdded{Name: u2, At: at(0)}, EffectDelaySet{Name: u2, At: at(1), Delay: 8 * time.Second})
	if d := b.EffectDelay(u2); d != 8*time.Second {
		t.Fatalf("delay = %v", d)
	}
	if v := b.Process(u2); v.Usage.EffectDelay != 8*time.Second {
		t.Fatalf("view delay = %v", v.Usage.EffectDelay)
	}
	if b.EffectDelay(Usage) != 0 {
		t.Fatal("consumer-usage has a delay")
	}
}

func TestShortMember(t *testing.T) {
	if got := ShortMember("rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccddeeff"); got != "…ccddeeff" {
		t.Fatalf("short = %q", got)
	}
	if got := ShortMember("m1"); got != "m1" {
		t.Fatalf("short = %q", got)
	}
}

// A consumer that does not say its membership still has its partitions
// tracked, with the generic timeline line.
func TestAssignedWithoutMembershipTracksPartitions(t *testing.T) {
	b := newBoard(ProcAdded{Name: u2, At: at(0)}, ProcStarted{Name: u2, PID: 11, At: at(0)},
		ev(u2, 1, status.Event{Type: status.Assigned, Partitions: []int32{2, 1}}))
	if got := b.Process(u2).Usage.Partitions; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("partitions %v", got)
	}
	if !hasEvent(b, u2, "rebalance: assigned partitions [2 1]") {
		t.Fatalf("events %v", b.Events())
	}
	b.Apply(ev(u2, 2, status.Event{Type: status.Revoked, Partitions: []int32{1, 2}}))
	if got := b.Process(u2).Usage.Partitions; got == nil || len(got) != 0 || !hasEvent(b, u2, "rebalance: revoked partitions [1 2]") {
		t.Fatalf("after revoke: %v", got)
	}
}

// Scaled, the group is caught up only once its live instances own every
// partition between them, each once.
func TestCaughtUpWaitsForTheGroupToSettle(t *testing.T) {
	hw := map[int32]int64{0: 10, 1: 10, 2: 10}
	b := newBoard(
		ProcAdded{Name: u2, At: at(0)}, ProcStarted{Name: Producer, PID: 9, At: at(0)},
		ProcStarted{Name: Usage, PID: 10, At: at(0)}, ProcStarted{Name: u2, PID: 11, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, GroupID: "demo-usage"}),
		ev(u2, 0.1, status.Event{Type: status.Started, GroupID: "demo-usage"}),
		ev(Usage, 0.2, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}}),
		Offsets{At: at(1), HighWatermarks: hw},
		Committed{At: at(1), Group: "demo-usage", Offsets: hw},
	)
	if b.UsageCaughtUp() {
		t.Fatal("caught up while consumer-usage-2 has not been assigned yet")
	}
	b.Apply(ev(Usage, 2, status.Event{Type: status.Revoked, Partitions: []int32{0, 1, 2}}))
	b.Apply(ev(Usage, 2.1, status.Event{Type: status.Assigned, Partitions: []int32{0, 1}}))
	b.Apply(Committed{At: at(3), Group: "demo-usage", Offsets: hw})
	if b.UsageCaughtUp() {
		t.Fatal("caught up while consumer-usage-2 has not been assigned")
	}
	b.Apply(ev(u2, 3.1, status.Event{Type: status.Assigned, Partitions: []int32{2}}))
	if !b.UsageCaughtUp() {
		t.Fatal("not caught up once the group settled")
	}
	b.Apply(ProcExited{Name: u2, PID: 11, At: at(4), Deliberate: true})
	if b.UsageCaughtUp() {
		t.Fatal("caught up while partition 2 belongs to a member that is gone")
	}
	b.Apply(ProcRemoved{Name: u2, At: at(4.5)})
	b.Apply(ev(Usage, 5, status.Event{Type: status.Revoked, Partitions: []int32{0, 1}}))
	b.Apply(ev(Usage, 5.1, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}}))
	if !b.UsageCaughtUp() {
		t.Fatal("not caught up back on one instance owning all")
	}
}

// A commit refused for lost ownership is a warning on the timeline, not a
// failure of the process (it keeps running).
func TestCommitRejectedIsNotAFailure(t *testing.T) {
	b := newBoard(rebalanceInputs()...)
	before := b.Process(Usage).State
	b.Apply(ev(Usage, 4, status.Event{Type: status.CommitRejected, Reason: "revoke", Error: "Broker: Specified group generation id is not valid"}))
	if v := b.Process(Usage); v.State != before || v.State == Failed {
		t.Fatalf("state %s after a refused commit, want %s", v.State, before)
	}
	if !hasEvent(b, Usage, "commit refused (revoke): Broker: Specified group generation id is not valid; not progress") {
		t.Fatalf("no event: %v", b.Events())
	}
}
