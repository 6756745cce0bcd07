package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/consumers/usage"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestJumpDoesNotBlockSensor: a valid-looking sensor-02 reading of 999,999
// h and km (under the maximum) lands in the lab's topic from a client of
// the test's own while the producer goes on, and consumer-usage (guarded)
// is crashed and restarted after it. The jump must be skipped with its
// kind by both consumers, the audit and the dead-letter topic, and never
// become the reference: the real readings after it are valid, and every
// sensor's usage, in the store and in the report, is what the producer's
// readings alone yield, verdict exact.
func TestJumpDoesNotBlockSensor(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
wait 4s              # the test injects the jump here; the producer goes on
crash consumer-usage
wait 500ms
restart consumer-usage
wait 2s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "guarded", "--interval", "50ms", "--seed", "17")
	d.awaitLog("the script's window", regexp.MustCompile(`script: wait 4s`), 2*time.Minute)
	brokers := regexp.MustCompile(`msg=running brokers=(\S+)`).FindStringSubmatch(d.stderr())
	if brokers == nil {
		t.Fatalf("no \"running brokers=...\" line in the log")
	}
	jump := injectJump(t, brokers[1], d.topic, "sensor-02")
	t.Logf("jump injected at %d/%d: %s", jump.Partition, jump.Offset, jump.Value)

	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	// consumer-usage's counters are its incarnation's: the one restarted
	// after the crash met the jump again only if it resumed before it.
	for name, least := range map[string]int64{"consumer-current": 1, "consumer-usage": 0} {
		p := r.proc(t, name)
		if p.Invalid == nil || *p.Invalid > 1 || *p.Invalid < least ||
			(*p.Invalid == 1) != strings.HasPrefix(p.LastInvalid, "jump: hours ") {
			t.Errorf("%s: invalid %v, last_invalid %q; want the one jump", name, fmtLag(p.Invalid), p.LastInvalid)
		}
	}
	skipped := regexp.MustCompile(`(consumer-\w+) invalid message skipped: partition (\d+) offset (\d+): (\w[\w-]*): `)
	byConsumer := map[string]int{}
	for _, m := range skipped.FindAllStringSubmatch(d.stderr(), -1) {
		if m[2]+"/"+m[3] != pos(jump.Partition, jump.Offset) || m[4] != string(telemetry.Jump) {
			t.Errorf("event log: %s skipped %s/%s as %s; only the jump at %s is invalid", m[1], m[2], m[3], m[4], pos(jump.Partition, jump.Offset))
		}
		byConsumer[m[1]]++
	}
	if byConsumer["consumer-current"] != 1 || byConsumer["consumer-usage"] < 1 {
		t.Errorf("event log: jumps skipped %v, want consumer-current once and consumer-usage at least once", byConsumer)
	}
	rt := d.readRunTruth()
	at := pos(jump.Partition, jump.Offset)
	var real Topic
	after := 0
	for _, rec := range rt.Topic.Records {
		if pos(rec.Partition, rec.Offset) == at {
			continue
		}
		real.Records = append(real.Records, rec)
		if string(rec.Key) == "sensor-02" && rec.Partition == jump.Partition && rec.Offset > jump.Offset {
			after++
		}
	}
	if len(real.Records) != len(rt.Topic.Records)-1 {
		t.Fatalf("the jump at %s is not in the topic read back", at)
	}
	if after < 10 {
		t.Fatalf("only %d sensor-02 readings after the jump: the test did not show they count", after)
	}
	// The independent computation, over the producer's readings alone.
	rt.Topic, rt.Truth = real, LastStates(real)
	rt.Expected = ExpectedUsage(real, rt.Checkpoints)
	if rt.Truth.Invalid != 0 {
		t.Fatalf("the producer's readings hold %d invalid records", rt.Truth.Invalid)
	}
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
	if cp := rt.Checkpoints["sensor-02"]; cp.Offset <= jump.Offset || cp.Message.Odometry.HoursTot >= 999999 {
		t.Errorf("sensor-02's checkpoint %d/%d (%.2f h) is not a real reading after the jump", cp.Partition, cp.Offset, cp.Message.Odometry.HoursTot)
	}
	for _, s := range r.Sensors {
		if s.Verdict != "exact" {
			t.Errorf("%s: verdict %q", s.SensorID, s.Verdict)
		}
		if s.SensorID == "sensor-02" {
			if s.Usage == nil || s.Usage.Hours <= 0 || s.Usage.Hours > 100 {
				t.Errorf("sensor-02: usage %+v, want the real few hours", s.Usage)
			} else {
				t.Logf("sensor-02: usage %.2f h, %.2f km, %d records; %d readings after the jump", s.Usage.Hours, s.Usage.Km, s.Usage.Records, after)
			}
		}
	}
	checkJumpForwarded(t, rt.Brokers, d.topic, at)
	for _, line := range strings.Split(d.stderr(), "\n") {
		if strings.Contains(line, "jump") {
			t.Logf("event log: %s", line)
		}
	}
}

// injectJump produces, with a franz-go client, a reading of sensor that
// is valid on its own (999,999 h and km, under the maxima) but far ahead
// of its last reading, to that sensor's partition, stamped after it.
func injectJump(t *testing.T, brokers, topic, sensor string) Record {
	t.Helper()
	last, ok := LastStates(ReadTopic(t, brokers, topic)).Sensors[sensor]
	if !ok {
		t.Fatalf("no reading of %s in the topic yet", sensor)
	}
	m := last.Message
	// A second ahead of the clock: after any reading the producer stamps
	// before the jump lands, so it is judged as a jump, not as backwards.
	m.Timestamp = max(time.Now().Add(time.Second).UnixMilli(), m.Timestamp+1)
	m.Odometry = telemetry.Odometry{HoursTot: 999999, KmTot: 999999}
	value, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.Decode([]byte(sensor), value); err != nil {
		t.Fatalf("the jump is not valid on its own: %v", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &kgo.Record{Topic: topic, Partition: last.Partition, Key: []byte(sensor), Value: value}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatalf("produce the jump: %v", err)
	}
	return Record{Partition: rec.Partition, Offset: rec.Offset, Key: rec.Key, Value: rec.Value}
}

// checkJumpForwarded: the dead-letter topic holds the jump once, as a jump.
func checkJumpForwarded(t *testing.T, brokers, topic, at string) {
	t.Helper()
	var reasons []string
	for _, r := range readDLQ(t, brokers, kafkacfg.DeadLetterTopic(topic)) {
		if r.Headers[usage.HeaderSourcePartition]+"/"+r.Headers[usage.HeaderSourceOffset] == at {
			reasons = append(reasons, r.Headers[usage.HeaderReason])
		} else {
			t.Errorf("dead-letter record %d names %s/%s, not the jump",
				r.Offset, r.Headers[usage.HeaderSourcePartition], r.Headers[usage.HeaderSourceOffset])
		}
	}
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "jump: ") {
		t.Errorf("the jump at %s in the dead-letter topic: %q, want once as a jump", at, reasons)
	} else {
		t.Logf("dead-letter topic: %s %s", at, reasons[0])
	}
}
