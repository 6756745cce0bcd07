package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/consumers/usage"
	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"github.com/kafka-recovery-lab/krl/producer"
)

// TestPoisonMessages injects malformed records of every kind while the
// producer publishes, both ways the product offers (the running producer's
// POST /inject-bad, which the dashboard's b key calls, and a one-shot
// producer --inject-bad), and checks against the topic read independently:
//   - consumer-current and consumer-usage each count exactly the injected
//     records as invalid, at exactly their offsets, and nothing else;
//   - the dead-letter topic holds each of them exactly once, with the
//     reason, source-partition and source-offset headers, and the reason's
//     kind is the kind injected;
//   - the audit (the dashboard's independent reader, same rule) skips the
//     same records, and no sensor anywhere (state, audit, usage) has a zero
//     or a non-finite value; guarded usage equals the topic's deltas;
//   - consumer-usage SIGKILLed and restarted in a fresh group (every
//     record, poison included, delivered again: the worst case of lost
//     commits) counts them again but forwards none of them twice.
func TestPoisonMessages(t *testing.T) {
	in := Stack(t)
	group := "demo-usage-e2e-" + RandomSuffix()
	dlqTopic := kafkacfg.DeadLetterTopic(in.Topic)

	cur := in.Role(t, "consumer", "current")
	use := in.Role(t, "consumer", "usage", "--mode", "guarded", "--reset", "earliest", "--group", group)
	qry := in.Role(t, "consumer", "query")
	curURL, qryURL := cur.URL(30*time.Second), qry.URL(30*time.Second)
	use.Await("consumer-usage assigned", isType(status.Assigned), 60*time.Second)

	prod := in.Role(t, "producer", "--interval", "100ms", "--seed", "11")
	prodURL := prod.URL(60 * time.Second)
	prod.Await("100 messages produced", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= 100
	}, 60*time.Second)

	// 1. The running producer, as the b key asks it: one of every kind.
	res := injectHTTP(t, prodURL, producer.BadCycle)
	if res.Delivered != producer.BadCycle || res.Error != "" {
		t.Fatalf("POST /inject-bad: %+v", res)
	}
	kindAt := map[string]string{}
	for _, r := range res.Records {
		kindAt[pos(r.Partition, r.Offset)] = r.Kind
	}
	// 2. A one-shot producer --inject-bad while the first one publishes.
	once := in.Role(t, "producer", "--inject-bad", strconv.Itoa(producer.BadCycle), "--seed", "11")
	if code, ok := once.WaitExit(60 * time.Second); !ok || code != 0 {
		t.Fatalf("producer --inject-bad: exited=%v code=%d", ok, code)
	}
	if ev, _ := once.WaitEvent(isType(status.BadInjected), time.Second); ev.Injected != int64(producer.BadCycle) {
		t.Fatalf("producer --inject-bad reported %+v", ev)
	}
	injected := 2 * producer.BadCycle

	// Valid records after the poison: none of it may become a reference.
	mark := prod.Mark()
	prod.AwaitFrom(mark, "100 more messages produced", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= 200
	}, 60*time.Second)
	pauseProducer(t, prod)

	// The truth, read independently from the topic.
	tp := ReadTopic(t, in.Brokers, in.Topic)
	truth := LastStates(tp)
	if truth.Invalid != injected || len(truth.Sensors) != 10 {
		t.Fatalf("the topic holds %d invalid records and %d sensors, %d were injected", truth.Invalid, len(truth.Sensors), injected)
	}
	poison := map[string]Record{}
	for _, r := range truth.InvalidAt {
		poison[pos(r.Partition, r.Offset)] = r
	}
	for at := range kindAt {
		if _, ok := poison[at]; !ok {
			t.Fatalf("POST /inject-bad says it wrote poison at %s; the topic has valid data there", at)
		}
	}
	t.Logf("topic: %d records, %d poison at %v", tp.Count(), len(poison), sortedIDs(poison))

	// consumer-current: exactly the poison, counted and skipped; its state
	// is the truth (checkState compares every sensor's last valid message).
	state := checkState(t, curURL, tp, truth)
	checkFinite(t, "consumer-current /state", stateMessages(state))
	checkInvalidEvents(t, cur, poison)

	// consumer-usage: the same records; its usage equals the topic's deltas.
	cps := awaitCheckpoints(t, in.Mongo, truth)
	awaitUsageInvalid(t, use, tp, int64(injected))
	checkInvalidEvents(t, use, poison)
	usageBefore := checkUsage(t, qryURL, tp, cps)
	checkFiniteUsage(t, usageBefore)

	// The dead-letter topic: each poison record once, with its headers.
	dlq := readDLQ(t, in.Brokers, dlqTopic)
	checkDLQ(t, dlq, in.Topic, poison, kindAt)

	// The audit: same rule, same records skipped, no zero or NaN anywhere.
	checkAudit(t, in.Brokers, in.Topic, tp, truth, poison, cps)

	// Crash consumer-usage and restart it in a fresh group from earliest:
	// every record comes again, the poison included.
	use.Kill()
	use2 := in.Role(t, "consumer", "usage", "--mode", "guarded", "--reset", "earliest", "--group", group+"-again")
	awaitUsageInvalid(t, use2, tp, int64(injected))
	checkInvalidEvents(t, use2, poison)
	if again := readDLQ(t, in.Brokers, dlqTopic); len(again) != len(dlq) {
		t.Fatalf("after the restart the dead-letter topic holds %d records, %d before: forwarded twice", len(again), len(dlq))
	}
	usageAfter := checkUsage(t, qryURL, tp, cps)
	if fmt.Sprint(usageAfter.Total) != fmt.Sprint(usageBefore.Total) {
		t.Fatalf("usage changed over the replay: %+v, then %+v", usageBefore.Total, usageAfter.Total)
	}
	for _, c := range []*Child{cur, use2, qry, prod} {
		if code, took := c.Stop(); code != 0 {
			t.Errorf("%s exited %d after SIGTERM (%s)", c.Name, code, took)
		}
	}
}

func pos(p int32, off int64) string { return fmt.Sprintf("%d/%d", p, off) }

func injectHTTP(t *testing.T, base string, n int) producer.InjectResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/inject-bad?n=%d", base, n), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /inject-bad: %v", err)
	}
	defer resp.Body.Close()
	var res producer.InjectResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /inject-bad: %s, %v (%+v)", resp.Status, err, res)
	}
	return res
}

// awaitUsageInvalid waits until consumer-usage has read every record of tp
// (its positions at the watermarks) and checks it counted exactly want.
func awaitUsageInvalid(t *testing.T, use *Child, tp Topic, want int64) {
	t.Helper()
	ev := use.Await("consumer-usage through the whole topic", func(e status.Event) bool {
		if e.Type != status.Progress || len(e.Positions) != len(tp.HighWatermarks) {
			return false
		}
		for _, p := range e.Positions {
			if p.Offset != tp.HighWatermarks[p.Partition] {
				return false
			}
		}
		return true
	}, 60*time.Second)
	if ev.Invalid != want || ev.Processed+ev.Invalid != int64(tp.Count()) {
		t.Fatalf("consumer-usage counted %d invalid and %d processed of %d records, %d injected", ev.Invalid, ev.Processed, tp.Count(), want)
	}
}

// checkInvalidEvents: the child's invalid_message events are exactly the
// poison records, once each.
func checkInvalidEvents(t *testing.T, c *Child, poison map[string]Record) {
	t.Helper()
	seen := map[string]int{}
	for _, e := range c.Events() {
		if e.Type != status.InvalidMessage {
			continue
		}
		at := pos(e.Partition, e.Offset)
		seen[at]++
		if _, ok := poison[at]; !ok || e.Error == "" {
			t.Errorf("%s: invalid_message at %s (%q) is not a poison record", c.Name, at, e.Error)
		}
	}
	for at := range poison {
		if seen[at] != 1 {
			t.Errorf("%s: poison record at %s reported %d times, want once", c.Name, at, seen[at])
		}
	}
}

type dlqRecord struct {
	Offset  int64
	Key     []byte
	Value   []byte
	Headers map[string]string
}

// readDLQ reads the whole dead-letter topic (every partition, low to high
// watermark) with its headers.
func readDLQ(t *testing.T, brokers, topic string) []dlqRecord {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfg.Audit(brokers, kafkacfg.AuditGroupPrefix+"e2e-dlq-"+RandomSuffix()))
	if err != nil {
		t.Fatalf("dlq reader: %v", err)
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, 10000)
	if err != nil {
		t.Fatalf("dlq reader: %v", err)
	}
	end := map[int32]int64{}
	var assign []kafka.TopicPartition
	for _, p := range md.Topics[topic].Partitions {
		low, high, err := c.QueryWatermarkOffsets(topic, p.ID, 10000)
		if err != nil {
			t.Fatalf("dlq reader: %v", err)
		}
		if high > low {
			end[p.ID] = high
			assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: kafka.Offset(low)})
		}
	}
	if len(md.Topics[topic].Partitions) == 0 {
		t.Fatalf("dead-letter topic %s does not exist", topic)
	}
	var out []dlqRecord
	if len(assign) == 0 {
		return out
	}
	if err := c.Assign(assign); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(end) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("dlq reader: not at the watermarks within 30s: %v", end)
		}
		if m, ok := c.Poll(100).(*kafka.Message); ok && m.TopicPartition.Error == nil {
			p, off := m.TopicPartition.Partition, int64(m.TopicPartition.Offset)
			r := dlqRecord{Offset: off, Key: m.Key, Value: m.Value, Headers: map[string]string{}}
			for _, h := range m.Headers {
				r.Headers[h.Key] = string(h.Value)
			}
			out = append(out, r)
			if off+1 >= end[p] {
				delete(end, p)
			}
		}
	}
	return out
}

// checkDLQ: one dead-letter record per poison record, same key and value,
// headers naming it, the reason's kind the kind injected (where known).
func checkDLQ(t *testing.T, dlq []dlqRecord, source string, poison map[string]Record, kindAt map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	kinds := map[string]int{}
	for _, r := range dlq {
		h := r.Headers
		at := h[usage.HeaderSourcePartition] + "/" + h[usage.HeaderSourceOffset]
		src, ok := poison[at]
		switch {
		case !ok:
			t.Errorf("dead-letter record %d names %s, not a poison record (headers %v)", r.Offset, at, h)
			continue
		case seen[at]:
			t.Errorf("poison record %s is in the dead-letter topic twice", at)
		case h[usage.HeaderSourceTopic] != source:
			t.Errorf("%s: source-topic %q", at, h[usage.HeaderSourceTopic])
		case string(r.Value) != string(src.Value) || string(r.Key) != string(src.Key):
			t.Errorf("%s: forwarded %q/%q, the topic has %q/%q", at, r.Key, r.Value, src.Key, src.Value)
		}
		seen[at] = true
		kind, _, _ := strings.Cut(h[usage.HeaderReason], ":")
		kinds[kind]++
		if want, ok := kindAt[at]; ok && kind != want {
			t.Errorf("%s: reason %q, injected as %s", at, h[usage.HeaderReason], want)
		}
		if _, err := telemetry.Check(r.Key, r.Value, nil); err == nil && kind != string(telemetry.Backwards) {
			t.Errorf("%s: forwarded as %q but valid on its own", at, h[usage.HeaderReason])
		}
	}
	if len(seen) != len(poison) {
		t.Errorf("dead-letter topic covers %d of %d poison records", len(seen), len(poison))
	}
	for _, k := range telemetry.Kinds {
		if kinds[string(k)] == 0 {
			t.Errorf("no dead-letter record of kind %s (kinds %v)", k, kinds)
		}
	}
}

// checkAudit runs the dashboard's audit reader on the topic: it must skip
// exactly the poison, hold every sensor's last valid message and expect the
// same usage as the independent computation, with no zero or NaN.
func checkAudit(t *testing.T, brokers, topic string, tp Topic, truth Truth, poison map[string]Record, cps map[string]store.Checkpoint) {
	t.Helper()
	r, err := audit.NewReader(brokers, topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	at := r.SnapshotWhen(ctx, 30*time.Second, func(a audit.Truth) bool { return a.Read() >= int64(tp.Count()) })
	if at.Read() != int64(tp.Count()) || at.Invalid != int64(len(poison)) {
		t.Fatalf("audit read %d records, %d invalid; the topic has %d, %d poison", at.Read(), at.Invalid, tp.Count(), len(poison))
	}
	for _, ir := range at.InvalidAt {
		if _, ok := poison[pos(ir.Partition, ir.Offset)]; !ok {
			t.Errorf("audit skipped %d/%d (%s), not a poison record", ir.Partition, ir.Offset, ir.Reason)
		}
	}
	want := ExpectedUsage(tp, cps)
	var msgs []telemetry.Message
	for id, s := range truth.Sensors {
		st, ok := at.Sensor(id)
		if !ok || !st.HasLast || st.Last.Message != s.Message {
			t.Errorf("audit's last message of %s: %+v, want %+v", id, st.Last, s.Message)
			continue
		}
		msgs = append(msgs, st.Last.Message)
		cp := cps[id]
		got, ok := at.ExpectedUsageBetween(id, cp.Partition, cp.FirstOffset, cp.Offset)
		if !ok || got != want[id] {
			t.Errorf("audit expects %+v for %s, the topic says %+v", got, id, want[id])
		}
	}
	checkFinite(t, "audit", msgs)
}

func stateMessages(s StateBody) []telemetry.Message {
	out := make([]telemetry.Message, len(s.Sensors))
	for i, x := range s.Sensors {
		out[i] = x.Message()
	}
	return out
}

// checkFinite: no value of a sensor became a zero or a NaN.
func checkFinite(t *testing.T, where string, msgs []telemetry.Message) {
	t.Helper()
	if len(msgs) == 0 {
		t.Errorf("%s: no sensors", where)
	}
	for _, m := range msgs {
		for _, v := range []float64{m.Odometry.HoursTot, m.Odometry.KmTot, m.Position.Lat, m.Position.Lon} {
			if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > telemetry.MaxKm {
				t.Errorf("%s: %s has %+v", where, m.SensorID, m)
				break
			}
		}
		if m.Timestamp <= 0 {
			t.Errorf("%s: %s has timestamp %d", where, m.SensorID, m.Timestamp)
		}
	}
}

func checkFiniteUsage(t *testing.T, u UsageBody) {
	t.Helper()
	lines := append([]UsageLine{u.Total}, u.Sensors...)
	sort.Slice(lines, func(i, j int) bool { return lines[i].SensorID < lines[j].SensorID })
	for _, l := range lines {
		for _, v := range []float64{l.TotalHours, l.TotalKm} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e6 {
				t.Errorf("usage of %q: %+v", l.SensorID, l)
			}
		}
	}
	if u.Total.TotalHours == 0 || u.Total.Records == 0 {
		t.Errorf("usage total is zero: %+v", u.Total)
	}
}

// TestHeadlessInjectBad drives the dashboard's own path (the script action
// inject-bad, the b key's Lab.InjectBad: the running producer's POST
// /inject-bad) and checks the --report contract: invalid per process (null
// where it reads no messages), equal to what was injected, and a usage
// that stays exact, with no zero or NaN.
func TestHeadlessInjectBad(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(fmt.Sprintf(`
wait-caught-up 60s
inject-bad %d
wait 500ms           # valid records after the poison
pause producer
wait-caught-up 60s
quit
`, producer.BadCycle), "--usage-mode", "guarded", "--interval", "50ms", "--seed", "13")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	for _, p := range r.Processes {
		reads := p.Name == "consumer-current" || p.Name == "consumer-usage"
		switch {
		case !reads && p.Invalid != nil:
			t.Errorf("%s reads no messages, yet its invalid is %d", p.Name, *p.Invalid)
		case reads && (p.Invalid == nil || *p.Invalid != int64(producer.BadCycle)):
			t.Errorf("%s: invalid %v, %d injected", p.Name, p.Invalid, producer.BadCycle)
		case reads && !strings.Contains(p.LastInvalid, ": "):
			t.Errorf("%s: last_invalid %q", p.Name, p.LastInvalid)
		}
	}
	rt := d.readRunTruth()
	if rt.Truth.Invalid != producer.BadCycle {
		t.Fatalf("the topic holds %d invalid records, %d injected", rt.Truth.Invalid, producer.BadCycle)
	}
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
	for _, s := range r.Sensors {
		if s.Current == nil || s.Truth == nil || s.Current.HoursTot == 0 || math.IsNaN(s.Current.KmTot) || s.Truth.HoursTot == 0 {
			t.Errorf("sensor %s in the report: current %+v truth %+v", s.SensorID, s.Current, s.Truth)
		}
	}
	if !strings.Contains(d.stderr(), fmt.Sprintf("published %d malformed records", producer.BadCycle)) {
		t.Errorf("the event log does not show the injection")
	}
}
