package board

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func partitionsBoard() *Board {
	return New([]string{Producer, Current, Usage, Query, "broker-1", "broker-2", "broker-3"}, Config{Topic: "sensor-data"})
}

func meta(p, leader int32, replicas, isr []int32, sensors ...string) PartitionMeta {
	return PartitionMeta{Partition: p, Leader: leader, Replicas: replicas, ISR: isr, Sensors: sensors}
}

var r123 = []int32{1, 2, 3}

func preferred(m PartitionMeta, node int32) PartitionMeta {
	m.Preferred = node
	return m
}

func TestPartitionsFailoverEvents(t *testing.T) {
	b := partitionsBoard()
	b.Apply(Partitions{At: at(1), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, r123), meta(1, 2, r123, r123), meta(2, 3, r123, r123)}})
	if n := len(b.Events()); n != 0 {
		t.Fatalf("the first metadata is a baseline, got events %v", b.Events())
	}
	b.Apply(ProcStarted{Name: "broker-2", PID: 42, At: at(0)})
	b.Apply(ProcExited{Name: "broker-2", PID: 42, At: at(10), Signal: "SIGKILL"})
	// First poll after the kill: no leader yet, ISR unchanged.
	b.Apply(Partitions{At: at(10.2), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, r123), meta(1, -1, r123, r123), meta(2, 3, r123, r123)}})
	if got := lastEvent(b); got != "partition 1 has no leader (was 2)" {
		t.Errorf("leaderless: %q", got)
	}
	if v := b.Partitions(); !v.Rows[1].Leaderless || v.Rows[0].Leaderless {
		t.Errorf("leaderless flags: %+v", v.Rows)
	}
	b.Apply(Partitions{At: at(10.4), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, []int32{1, 3}), meta(1, 3, r123, []int32{1, 3}), meta(2, 3, r123, []int32{1, 3})}})
	if !hasEvent(b, "", "partition 1 leader 2 → 3 in 0.4 s after broker-2 exited") {
		t.Errorf("no timed leader change: %v", b.Events())
	}
	// One event for the three partitions, before the leader change.
	if !hasEvent(b, "", "partitions 0 1 2 ISR [1 2 3] → [1 3]") || countEvents(b, "ISR [1 2 3] → [1 3]") != 1 ||
		!strings.HasPrefix(lastEvent(b), "partition 1 leader 2 → 3") {
		t.Errorf("ISR shrink events: %v", b.Events())
	}
	if hasEvent(b, "", "NOT_ENOUGH_REPLICAS") {
		t.Errorf("2 in sync of min 2 is enough: %v", b.Events())
	}
	v := b.Partitions()
	if !v.Rows[0].UnderReplicated || v.Rows[0].BelowMinISR || v.SingleNode || !slices.Equal(v.Nodes, r123) {
		t.Errorf("view: %+v", v)
	}
	// A second broker goes: ISR 1 < min 2.
	b.Apply(Partitions{At: at(20), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, []int32{1}), meta(1, 1, r123, []int32{1}), meta(2, 1, r123, []int32{1})}})
	if !hasEvent(b, "", "partitions 0 1 2 ISR [1 3] → [1] < min.insync.replicas 2: writes refused (NOT_ENOUGH_REPLICAS)") {
		t.Errorf("no below-min event: %v", b.Events())
	}
	// broker-3 was not seen exiting: an untimed change.
	if !hasEvent(b, "", "partition 2 leader 3 → 1") || hasEvent(b, "", "partition 2 leader 3 → 1 in") {
		t.Errorf("untimed change: %v", b.Events())
	}
	if got := b.NotEnoughReplicas(); got != "NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)" {
		t.Errorf("NotEnoughReplicas = %q", got)
	}
	// ISRSince is the first read showing these ISRs, not the latest read.
	b.Apply(Partitions{At: at(20.5), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, []int32{1}), meta(1, 1, r123, []int32{1}), meta(2, 1, r123, []int32{1})}})
	if v := b.Partitions(); !v.ISRSince.Equal(at(20)) || !v.At.Equal(at(20.5)) {
		t.Errorf("ISRSince %v, At %v: want the read at 20 s, the latest at 20.5 s", v.ISRSince, v.At)
	}
	b.Apply(Partitions{At: at(30), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, r123), meta(1, 1, r123, r123), meta(2, 1, r123, r123)}})
	if !hasEvent(b, "", "partitions 0 1 2 ISR [1] → [1 2 3]") || b.NotEnoughReplicas() != "" {
		t.Errorf("ISR grown back: %v", b.Events())
	}
	// The controller hands leadership back to the first replica while the
	// old leader stays in sync: a rebalance, not a failure.
	b.Apply(Partitions{At: at(31), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, r123), preferred(meta(1, 2, r123, r123), 2), meta(2, 1, r123, r123)}})
	if got := lastEvent(b); got != "partition 1 leader 1 → 2 (back to its preferred leader, the first replica)" {
		t.Errorf("preferred leader: %q", got)
	}
	if m := b.Partitions().Rows[1].LastMove; m == nil || !m.Preferred || m.After != 0 {
		t.Errorf("preferred move: %+v", m)
	}
	// A late answer of an older poll changes nothing.
	b.Apply(Partitions{At: at(25), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{meta(0, 2, r123, []int32{2})}})
	if v := b.Partitions(); len(v.Rows) != 3 || v.Rows[0].Leader != 1 {
		t.Errorf("an older poll replaced a newer one: %+v", v.Rows)
	}
}

func TestPartitionsEmbeddedAndMisplaced(t *testing.T) {
	b := newBoard(
		Partitions{At: at(1), Topic: "sensor-data", MinISR: 1, Rows: []PartitionMeta{
			meta(0, 0, []int32{0}, []int32{0}, "sensor-09"),
			meta(1, 0, []int32{0}, []int32{0}, "sensor-02", "sensor-03"),
			meta(2, 0, []int32{0}, []int32{0}, "sensor-01")}},
		Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 10, 1: 20, 2: 30}},
		Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 8, 1: 20}},
		SensorsSnapshot{At: at(1), Sensors: []SensorState{
			{SensorID: "sensor-09", Partition: 0}, {SensorID: "sensor-02", Partition: 1},
			{SensorID: "sensor-03", Partition: 2}, {SensorID: "sensor-01", Partition: 2}}},
		Tick{Now: at(2)},
	)
	v := b.Partitions()
	if !v.SingleNode || !slices.Equal(v.Nodes, []int32{0}) || v.Stale || v.MinISR != 1 {
		t.Errorf("embedded view: %+v", v)
	}
	if r := v.Rows[0]; r.HighWatermark != 10 || r.Committed != 8 || r.Lag != 2 || r.UnderReplicated || r.BelowMinISR {
		t.Errorf("p0: %+v", r)
	}
	if r := v.Rows[2]; r.Committed != -1 || r.Lag != -1 {
		t.Errorf("p2 has no commit: %+v", r)
	}
	if !slices.Equal(v.Rows[1].Misplaced, []string{"sensor-03"}) || len(v.Rows[0].Misplaced) != 0 {
		t.Errorf("misplaced: %+v", v.Rows)
	}

	raw, err := json.Marshal(b.Report())
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Partitions []map[string]any `json:"partitions"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	want := `{"committed":{"demo-usage":20},"high_watermark":20,"isr":[0],"leader":0,"log_start":null,"min_insync_replicas":1,"partition":1,"replicas":[0],"sensors":["sensor-02","sensor-03"],"sensors_misplaced":["sensor-03"]}`
	got, _ := json.Marshal(rep.Partitions[1])
	if len(rep.Partitions) != 3 || string(got) != want {
		t.Errorf("report partition 1:\n got %s\nwant %s", got, want)
	}
	if got, _ := json.Marshal(rep.Partitions[2]["committed"]); string(got) != "{}" {
		t.Errorf("p2 committed: %s", got)
	}

	// A failed read keeps the rows, marked stale, with one event.
	b.Apply(Partitions{At: at(3), Err: errors.New("timed out")})
	b.Apply(Partitions{At: at(4), Err: errors.New("timed out")})
	if v := b.Partitions(); !v.Stale || len(v.Rows) != 3 || countEvents(b, "reading the topic's partitions failed") != 1 {
		t.Errorf("after failures: stale=%v rows=%d events=%v", v.Stale, len(v.Rows), b.Events())
	}
	if v := b.Partitions(); v.Rows[0].CommittedUnknown {
		t.Error("commits were read")
	}
	b.Apply(Committed{At: at(4), Group: "demo-usage", Err: errors.New("timed out")})
	if v := b.Partitions(); !v.Rows[0].CommittedUnknown || v.Rows[0].Lag != -1 {
		t.Errorf("a failed commit read: %+v", v.Rows[0])
	}
	// A failed watermark read marks the rows' watermarks stale until one
	// succeeds (they keep the last ones read).
	b.Apply(Offsets{At: at(5), Err: errors.New("no log end in the answer (-1001)")})
	if v := b.Partitions(); !v.OffsetsStale || v.Rows[0].HighWatermark != 10 {
		t.Errorf("after a failed watermark read: stale %v hw %d", v.OffsetsStale, v.Rows[0].HighWatermark)
	}
	b.Apply(Offsets{At: at(6), HighWatermarks: map[int32]int64{0: 11, 1: 20, 2: 30}})
	if v := b.Partitions(); v.OffsetsStale || v.Rows[0].HighWatermark != 11 {
		t.Errorf("after a good read: stale %v hw %d", v.OffsetsStale, v.Rows[0].HighWatermark)
	}
	// A new leader catching up its watermark is the leader change's
	// business: stale marks, no failure announced, no "works again".
	before := len(b.Events())
	b.Apply(Offsets{At: at(7), Err: errors.New("observe: list offsets sensor-data[1]: Broker: Leader high watermark is not caught up")})
	if v := b.Partitions(); !v.OffsetsStale || len(b.Events()) != before {
		t.Errorf("catching up: stale %v, events %v", v.OffsetsStale, b.Events()[before:])
	}
	b.Apply(Offsets{At: at(8), HighWatermarks: map[int32]int64{0: 12, 1: 20, 2: 30}})
	if v := b.Partitions(); v.OffsetsStale || len(b.Events()) != before {
		t.Errorf("caught up: stale %v, events %v", v.OffsetsStale, b.Events()[before:])
	}
	// For longer than a leader change takes, it is said after all, and
	// its end too.
	catching := errors.New("observe: list offsets sensor-data[1]: Broker: Leader high watermark is not caught up")
	for sec := 9.0; sec <= 15; sec++ {
		b.Apply(Offsets{At: at(sec), Err: catching})
	}
	if !hasEvent(b, "", "reading the topic's offsets fails for 6 s: observe: list offsets sensor-data[1]: Broker: Leader high watermark is not caught up") ||
		countEvents(b, "reading the topic's offsets fails") != 1 {
		t.Errorf("a long catching up: %v", b.Events()[before:])
	}
	b.Apply(Offsets{At: at(16), HighWatermarks: map[int32]int64{0: 12, 1: 20, 2: 30}})
	if !hasEvent(b, "", "reading the topic's offsets works again") {
		t.Errorf("no end of the long catching up: %v", b.Events()[before:])
	}
	if b := newBoard(); len(b.Report().Partitions) != 0 || b.Report().Partitions == nil {
		t.Error("a fresh board's report needs an empty partitions list")
	}
}

func TestProducerBlocked(t *testing.T) {
	b := partitionsBoard()
	b.Apply(ProcStarted{Name: Producer, PID: 7, At: at(0)})
	b.Apply(ev(Producer, 0.5, status.Event{Type: status.Connected, Endpoint: "kafka"}))
	b.Apply(Partitions{At: at(1), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		meta(0, 1, r123, []int32{1}), meta(1, 1, r123, []int32{1, 3})}})
	b.Apply(ev(Producer, 5, status.Event{Type: status.Blocked, Count: 40, Millis: 2100}))
	b.Apply(Tick{Now: at(6)})
	pv := b.Process(Producer)
	if pv.StateLabel != "blocked, 40 buf" || pv.Level != LevelBad || pv.Producer.Buffered != 40 ||
		pv.Producer.BlockedCause != "NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)" {
		t.Errorf("blocked producer: %q %v %d %q", pv.StateLabel, pv.Level, pv.Producer.Buffered, pv.Producer.BlockedCause)
	}
	if !hasEvent(b, Producer, "blocked: 40 buffered, no ack for 2.1 s: NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)") {
		t.Errorf("blocked event: %v", b.Events())
	}
	var rp ReportProcess
	for _, p := range b.Report().Processes {
		if p.Name == Producer {
			rp = p
		}
	}
	if rp.Buffered == nil || *rp.Buffered != 40 || !strings.HasPrefix(rp.BlockedCause, "NOT_ENOUGH_REPLICAS") {
		t.Errorf("report: %+v", rp)
	}
	b.Apply(ev(Producer, 9, status.Event{Type: status.Unblocked, Count: 80, Millis: 6000}))
	if pv := b.Process(Producer); pv.StateLabel != "running" || pv.Producer.Blocked != 0 {
		t.Errorf("after unblocked: %q", pv.StateLabel)
	}
	if !hasEvent(b, Producer, "unblocked after 6.0 s") {
		t.Errorf("unblocked event: %v", b.Events())
	}
}

func TestProducerBlockedCause(t *testing.T) {
	b := partitionsBoard()
	b.Apply(ProcStarted{Name: Producer, PID: 7, At: at(0)})
	b.Apply(ev(Producer, 0.5, status.Event{Type: status.Connected, Endpoint: "kafka"}))
	// The producer's own error, no metadata saying why.
	b.Apply(ev(Producer, 3, status.Event{Type: status.Blocked, Count: 5, Millis: 2500, Error: "NOT_ENOUGH_REPLICAS (Broker: Not enough in-sync replicas)"}))
	if got := b.Process(Producer).Producer.BlockedCause; got != "NOT_ENOUGH_REPLICAS (Broker: Not enough in-sync replicas)" {
		t.Errorf("cause without metadata: %q", got)
	}
	// The metadata agrees and has the figures.
	b.Apply(Partitions{At: at(4), MinISR: 2, Rows: []PartitionMeta{meta(0, 1, r123, []int32{1})}})
	if got := b.Process(Producer).Producer.BlockedCause; got != "NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)" {
		t.Errorf("cause with metadata: %q", got)
	}
	// A client-side error gives way to the metadata's cause.
	b.Apply(ev(Producer, 6, status.Event{Type: status.Blocked, Count: 7, Millis: 5500, Error: "Local: Broker transport failure"}))
	if got := b.Process(Producer).Producer.BlockedCause; got != "NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)" {
		t.Errorf("local error with metadata: %q", got)
	}
	// Another broker error wins over the metadata.
	b.Apply(ev(Producer, 8, status.Event{Type: status.Blocked, Count: 9, Millis: 7500, Error: "LEADER_NOT_AVAILABLE (Broker: Leader not available)"}))
	if got := b.Process(Producer).Producer.BlockedCause; got != "LEADER_NOT_AVAILABLE (Broker: Leader not available)" {
		t.Errorf("other error: %q", got)
	}
	// A changed cause is said again; the same cause repeated is not.
	if pv := b.Process(Producer); pv.Producer.Buffered != 9 || countEvents(b, "still blocked: 9 buffered, no ack for 7.5 s: LEADER_NOT_AVAILABLE") != 1 {
		t.Errorf("a Blocked with another cause updates the count and says the cause once: %d %v", pv.Producer.Buffered, b.Events())
	}
	b.Apply(ev(Producer, 13, status.Event{Type: status.Blocked, Count: 12, Millis: 12500, Error: "LEADER_NOT_AVAILABLE (Broker: Leader not available)"}))
	if pv := b.Process(Producer); pv.Producer.Buffered != 12 || countEvents(b, "blocked: ") != 2 {
		t.Errorf("a repeated Blocked updates the count without another event: %d %v", pv.Producer.Buffered, b.Events())
	}
}

// TestProducerRefusedAfterBrokerLoss: the producer first loses the broker
// it wrote to (retrying, a client-side error), then the ISR falls below
// min.insync.replicas: the row says blocked, the timeline says the new
// cause once, and not the old one again when the ISR grows back.
func TestProducerRefusedAfterBrokerLoss(t *testing.T) {
	b := partitionsBoard()
	b.Apply(ProcStarted{Name: Producer, PID: 7, At: at(0)})
	b.Apply(ev(Producer, 0.5, status.Event{Type: status.Connected, Endpoint: "kafka"}))
	b.Apply(Partitions{At: at(1), MinISR: 2, Rows: []PartitionMeta{meta(0, 1, r123, []int32{1, 3})}})
	b.Apply(ev(Producer, 2, status.Event{Type: status.Retrying, Endpoint: "kafka", Error: "broker unreachable"}))
	b.Apply(ev(Producer, 3, status.Event{Type: status.Blocked, Count: 30, Millis: 2500, Error: "Local: Broker transport failure"}))
	b.Apply(Partitions{At: at(6), MinISR: 2, Rows: []PartitionMeta{meta(0, 1, r123, []int32{1})}})
	if pv := b.Process(Producer); pv.StateLabel != "blocked, 30 buf" {
		t.Errorf("state %q, want blocked while the live brokers refuse", pv.StateLabel)
	}
	if countEvents(b, "still blocked: 30 buffered, no ack for 5.5 s: NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)") != 1 {
		t.Errorf("the refusal is not on the timeline: %v", b.Events())
	}
	b.Apply(Partitions{At: at(9), MinISR: 2, Rows: []PartitionMeta{meta(0, 1, r123, []int32{1, 3})}})
	if n := countEvents(b, "blocked"); n != 2 {
		t.Errorf("%d blocked events, want 2 (no fallback to the first cause): %v", n, b.Events())
	}
}

// TestPartitionsKeysCheck: the audit's read of the topic set against the
// partitioner's placement: a sensor found elsewhere, or out of order, is
// named; sensors the audit has not read, or the partitioner did not place,
// are not counted as checked.
func TestPartitionsKeysCheck(t *testing.T) {
	parts := Partitions{At: at(1), Topic: "sensor-data", MinISR: 1, Rows: []PartitionMeta{
		meta(0, 0, []int32{0}, []int32{0}, "sensor-09"),
		meta(1, 0, []int32{0}, []int32{0}, "sensor-02", "sensor-03"),
		meta(2, 0, []int32{0}, []int32{0}, "sensor-01")}}
	if k := newBoard(parts, Tick{Now: at(2)}).Partitions().Keys; k.Seen || k.Keys != 0 {
		t.Errorf("before the audit: %+v", k)
	}
	b := newBoard(parts, TruthSnapshot{At: at(1), AuditThrough: map[int32]int64{0: 6, 1: 13, 2: 8}, Sensors: []Truth{
		{SensorID: "sensor-09", Partitions: []int32{0}, Valid: 5},
		{SensorID: "sensor-02", Partitions: []int32{1}, Valid: 6},
		{SensorID: "sensor-03", Partitions: []int32{1}, Valid: 7},
		{SensorID: "sensor-01", Partitions: []int32{2}, Valid: 8},
		{SensorID: "sensor-44", Partitions: []int32{0}, Valid: 1}, // not placed: not checked
	}}, Tick{Now: at(2)})
	k := b.Partitions().Keys
	if !k.Seen || k.Keys != 4 || k.Records != 26 || k.Disordered != 0 || len(k.Scattered) != 0 {
		t.Errorf("all in place: %+v", k)
	}
	if rk := b.Report().Keys; rk == nil || rk.Sensors != 4 || rk.Records != 26 || rk.Scattered == nil {
		t.Errorf("report keys: %+v", rk)
	}
	if newBoard().Report().Keys != nil {
		t.Error("report keys before the audit's first read")
	}
	b.Apply(TruthSnapshot{At: at(3), Sensors: []Truth{
		{SensorID: "sensor-09", Partitions: []int32{0}, Valid: 5},
		{SensorID: "sensor-02", Partitions: []int32{1, 2}, Valid: 6},
		{SensorID: "sensor-03", Partitions: []int32{1}, Valid: 7, Disordered: 2},
		{SensorID: "sensor-01", Partitions: []int32{0}, Valid: 8},
	}})
	k = b.Partitions().Keys
	want := []string{"sensor-01 in [0], computed 2", "sensor-02 in [1 2], computed 1"}
	if !slices.Equal(k.Scattered, want) || k.Disordered != 2 || !slices.Equal(k.DisorderedKeys, []string{"sensor-03"}) {
		t.Errorf("scattered and disordered: %+v", k)
	}
}

// TestAuditFailingWhileAClusterBrokerIsDown: the usage panel names the
// broker that is down rather than calling the cluster unreachable.
func TestAuditFailingWhileAClusterBrokerIsDown(t *testing.T) {
	b := partitionsBoard()
	b.Apply(ProcStarted{Name: "broker-2", PID: 42, At: at(0)})
	b.Apply(TruthSnapshot{At: at(1), AuditOffset: 10})
	b.Apply(ProcExited{Name: "broker-2", PID: 42, At: at(5), Signal: "SIGKILL"})
	b.Apply(TruthSnapshot{At: at(6), Err: errors.New("127.0.0.1:34995/2: Connect to ipv4#127.0.0.1:34995 failed: Connection refused")})
	if v := b.Usage(); v.TruthReason != "broker-2 down, audit showing its last read" {
		t.Errorf("truth reason %q", v.TruthReason)
	}
}

// TestPartitionsBalanced: every partition led by its preferred replica,
// by fresh metadata.
func TestPartitionsBalanced(t *testing.T) {
	b := partitionsBoard()
	b.Apply(Partitions{At: at(1), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		preferred(meta(0, 1, r123, r123), 1), preferred(meta(1, 3, r123, r123), 2), preferred(meta(2, 3, r123, r123), 3)}})
	b.Apply(Tick{Now: at(1.5)})
	if b.Partitions().Balanced() {
		t.Error("p1 led by 3, preferred 2: not balanced")
	}
	b.Apply(Partitions{At: at(2), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{
		preferred(meta(0, 1, r123, r123), 1), preferred(meta(1, 2, r123, r123), 2), preferred(meta(2, 3, r123, r123), 3)}})
	b.Apply(Tick{Now: at(2.5)})
	if !b.Partitions().Balanced() {
		t.Errorf("every leader preferred: %+v", b.Partitions().Rows)
	}
	b.Apply(Tick{Now: at(20)})
	if b.Partitions().Balanced() {
		t.Error("stale metadata said balanced")
	}
}
