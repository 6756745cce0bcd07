package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestWhatCountsAsAReading: the cases docs/faults.md decides (a reading a
// day back, the same reading again, a different one at the same instant,
// lat 999, a key given twice, SENSOR-03, "sensor-03 "), produced by a
// client of the test's own into sensor-03's partition after the
// producer's readings. consumer-current, consumer-usage and the audit must
// skip exactly the same records for the same kind, and take the others.
func TestWhatCountsAsAReading(t *testing.T) {
	in := Stack(t)
	prod := in.Role(t, "producer", "--interval", "10ms", "--seed", "7", "--count", "3")
	if code, ok := prod.WaitExit(60 * time.Second); !ok || code != 0 {
		t.Fatalf("producer --count 3: exited=%v code=%d", ok, code)
	}
	ref, ok := LastStates(ReadTopic(t, in.Brokers, in.Topic)).Sensors["sensor-03"]
	if !ok {
		t.Fatal("no reading of sensor-03")
	}
	last := ref.Message
	enc := func(m telemetry.Message) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dayBack, moved, lat999, upper, padded := last, last, last, last, last
	dayBack.Timestamp -= 24 * 3_600_000
	moved.Odometry.HoursTot += 0.1
	lat999.Timestamp++
	lat999.Position.Lat = 999
	upper.SensorID, padded.SensorID = "SENSOR-03", "sensor-03 "
	twice := strings.Replace(enc(last), `"hours_tot":`, `"hours_tot":999999,"hours_tot":`, 1)
	cases := []struct {
		name, key, value string
		want             telemetry.Kind // "" = a reading
	}{
		{"a day back", "sensor-03", enc(dayBack), telemetry.Backwards},
		{"the same reading again", "sensor-03", enc(last), ""},
		{"another reading at the same instant", "sensor-03", enc(moved), telemetry.Jump},
		{"lat 999", "sensor-03", enc(lat999), telemetry.Absurd},
		{"hours_tot twice", "sensor-03", twice, telemetry.Malformed},
		{"SENSOR-03", "SENSOR-03", enc(upper), ""},
		{"sensor-03 with a trailing space", "sensor-03 ", enc(padded), telemetry.Malformed},
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(in.Brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	wantKind := map[string]telemetry.Kind{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range cases {
		r := &kgo.Record{Topic: in.Topic, Partition: ref.Partition, Key: []byte(c.key), Value: []byte(c.value)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", c.name, err)
		}
		if c.want != "" {
			wantKind[pos(r.Partition, r.Offset)] = c.want
		}
		t.Logf("%s at %d/%d: want %q", c.name, r.Partition, r.Offset, c.want)
	}
	tp := ReadTopic(t, in.Brokers, in.Topic)

	cur := in.Role(t, "consumer", "current")
	use := in.Role(t, "consumer", "usage", "--mode", "guarded", "--reset", "earliest", "--group", "demo-usage-e2e-"+RandomSuffix())
	curURL := cur.URL(30 * time.Second)
	cur.Await("consumer-current caught up", isType(status.CaughtUp), 60*time.Second)
	awaitUsageInvalid(t, use, tp, int64(len(wantKind)))
	for _, c := range []*Child{cur, use} {
		got := map[string]bool{}
		for _, e := range c.Events() {
			if e.Type != status.InvalidMessage {
				continue
			}
			at := pos(e.Partition, e.Offset)
			got[at] = true
			if want, ok := wantKind[at]; !ok || !strings.HasPrefix(e.Error, string(want)+": ") {
				t.Errorf("%s skipped %s as %q, want %q", c.Name, at, e.Error, want)
			}
		}
		if len(got) != len(wantKind) {
			t.Errorf("%s skipped %d records, want %d", c.Name, len(got), len(wantKind))
		}
	}
	checkAuditSkips(t, in.Brokers, in.Topic, tp, wantKind)

	var state StateBody
	if code, err := GetJSON(curURL+"/state", &state); err != nil || code != 200 {
		t.Fatalf("/state: %d %v", code, err)
	}
	for _, s := range state.Sensors {
		switch s.SensorID {
		case "sensor-03":
			if s.Message() != last {
				t.Errorf("consumer-current's sensor-03 is %+v, want the producer's last %+v", s.Message(), last)
			}
		case "SENSOR-03":
			if s.Message() != upper {
				t.Errorf("consumer-current's SENSOR-03 is %+v, want %+v", s.Message(), upper)
			}
			upper.SensorID = "" // seen
		}
	}
	if upper.SensorID != "" {
		t.Errorf("consumer-current does not show SENSOR-03 as a sensor of its own")
	}
}

// checkAuditSkips: the dashboard's audit reader skips exactly the records
// of want, each for its kind.
func checkAuditSkips(t *testing.T, brokers, topic string, tp Topic, want map[string]telemetry.Kind) {
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
	if at.Read() != int64(tp.Count()) || at.Invalid != int64(len(want)) {
		t.Fatalf("audit read %d records, %d invalid; the topic has %d, %d invalid", at.Read(), at.Invalid, tp.Count(), len(want))
	}
	for _, ir := range at.InvalidAt {
		if k, ok := want[pos(ir.Partition, ir.Offset)]; !ok || !strings.HasPrefix(ir.Reason, string(k)+": ") {
			t.Errorf("audit skipped %d/%d as %q, want %q", ir.Partition, ir.Offset, ir.Reason, k)
		}
	}
	if s, ok := at.Sensor("SENSOR-03"); !ok || !s.HasLast {
		t.Errorf("the audit has no SENSOR-03")
	}
}
