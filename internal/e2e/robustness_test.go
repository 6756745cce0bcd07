package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// TestBadInput writes malformed records straight into the topic between
// two producer runs: consumer-current counts and skips them, nothing
// crashes, /state still equals the truth, and the producer continues past
// them (a record whose odometer went backwards does not pull it back).
func TestBadInput(t *testing.T) {
	in := Stack(t)
	prod := in.Role(t, "producer", "--interval", "10ms", "--seed", "7", "--count", "5")
	if code, ok := prod.WaitExit(60 * time.Second); !ok || code != 0 {
		t.Fatalf("producer --count 5: exited=%v code=%d", ok, code)
	}
	tp := ReadTopic(t, in.Brokers, in.Topic)
	if tp.Count() != 50 {
		t.Fatalf("producer --count 5 with 10 sensors wrote %d records", tp.Count())
	}
	last := LastStates(tp).Sensors["sensor-01"].Message

	backwards := last
	backwards.Timestamp++
	backwards.Odometry.HoursTot -= 10
	backwardsJSON, err := json.Marshal(backwards)
	if err != nil {
		t.Fatal(err)
	}
	ts := fmt.Sprint(last.Timestamp + 2)
	k := []byte("sensor-01")
	bad := [][2][]byte{
		{k, []byte("this is not JSON")},
		{k, []byte("")},
		{k, []byte(`{"sensor_id":"sensor-01","timestamp":` + ts + `}`)},
		{k, []byte(`{"sensor_id":"sensor-01","timestamp":"yesterday","odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":45,"lon":9}}`)},
		{k, []byte(`{"sensor_id":"sensor-01","timestamp":` + ts + `,"odometry":{"hours_tot":"9000","km_tot":1},"position":{"lat":45,"lon":9}}`)},
		{k, []byte(`{"sensor_id":"sensor-01","timestamp":` + ts + `,"odometry":{"hours_tot":9000,"km_tot":9000},"position":{"lat":145,"lon":9}}`)},
		{k, backwardsJSON},
		{[]byte("sensor-02"), []byte(`{"sensor_id":"sensor-03","timestamp":` + ts + `,"odometry":{"hours_tot":9000,"km_tot":9000},"position":{"lat":45,"lon":9}}`)},
		{nil, []byte(`[1,2,3]`)},
	}
	injected := Produce(t, in.Brokers, in.Topic, bad...)
	where := map[string]bool{}
	for _, r := range injected {
		where[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = true
	}

	tp2 := ReadTopic(t, in.Brokers, in.Topic)
	truth2 := LastStates(tp2)
	if truth2.Invalid != len(bad) { // the harness itself must see them as invalid
		t.Fatalf("independent reader finds %d invalid records, %d were injected", truth2.Invalid, len(bad))
	}

	cur := in.Role(t, "consumer", "current")
	use := in.Role(t, "consumer", "usage", "--reset", "earliest", "--group", "demo-usage-e2e-"+RandomSuffix())
	curURL := cur.URL(30 * time.Second)
	cur.Await("consumer-current caught up", isType(status.CaughtUp), 60*time.Second)
	got := checkState(t, curURL, tp2, truth2)
	if got.Sensors[0].SensorID != "sensor-01" || got.Sensors[0].Message() != last {
		t.Fatalf("sensor-01 in /state is %+v, want the last valid %+v", got.Sensors[0], last)
	}
	for _, e := range cur.Events() {
		if e.Type == status.InvalidMessage {
			if !where[fmt.Sprintf("%d/%d", e.Partition, e.Offset)] || e.Error == "" {
				t.Errorf("invalid_message event for %d/%d (%q), which is not an injected record", e.Partition, e.Offset, e.Error)
			}
			delete(where, fmt.Sprintf("%d/%d", e.Partition, e.Offset))
		}
	}
	if len(where) != 0 {
		t.Errorf("no invalid_message event for injected records at %v", where)
	}

	// The producer again: it must continue from sensor-01's last valid
	// odometers, so the independent reader finds no new invalid record.
	prod2 := in.Role(t, "producer", "--interval", "10ms", "--seed", "7", "--count", "5")
	if code, ok := prod2.WaitExit(60 * time.Second); !ok || code != 0 {
		t.Fatalf("second producer --count 5: exited=%v code=%d", ok, code)
	}
	tp3 := ReadTopic(t, in.Brokers, in.Topic)
	truth3 := LastStates(tp3)
	if truth3.Invalid != len(bad) {
		t.Fatalf("after the second producer run %d records are invalid, %d were injected", truth3.Invalid, len(bad))
	}
	checkState(t, curURL, tp3, truth3)

	// consumer-usage read the same records from the start: it counted the
	// undecodable ones and is still running.
	decodeErrors := 0
	for _, r := range truth3.InvalidAt {
		if _, err := telemetry.Decode(r.Key, r.Value); err != nil {
			decodeErrors++
		}
	}
	use.Await("consumer-usage counted the invalid records", func(e status.Event) bool {
		return e.Type == status.Progress && e.Invalid >= int64(decodeErrors)
	}, 30*time.Second)
	for _, c := range []*Child{cur, use} {
		if exited, code := c.Exited(); exited {
			t.Fatalf("%s exited with %d", c.Name, code)
		}
		if code, took := c.Stop(); code != 0 {
			t.Errorf("%s exited %d after SIGTERM (%s)", c.Name, code, took)
		}
	}
}

// TestBadFlags: every role answers a command-line mistake with exit code 2.
func TestBadFlags(t *testing.T) {
	bin := Binary(t)
	cases := [][]string{
		{"broker", "--nope"},
		{"broker", "--partitions", "many"},
		{"store", "--listen"},
		{"producer", "--interval", "soon"},
		{"producer", "--sensors", "0"},
		{"producer", "stray-argument"},
		{"producer", "--inject-bad", "-1"},
		{"producer", "--inject-bad", "lots"},
		{"producer", "--http", "no-port"},
		{"consumer", "current", "--nope"},
		{"consumer", "current", "--http", "no-port"},
		{"consumer", "usage", "--mode", "sloppy"},
		{"consumer", "usage", "--reset", "middle"},
		{"consumer", "query", "--http"},
		{"consumer", "query", "--mongo", "http://not-mongo"},
		{"consumer"},
		{"consumer", "nope"},
		{"nope"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			t.Parallel()
			c := Start(t, bin, args...)
			code, ok := c.WaitExit(20 * time.Second)
			if !ok {
				t.Fatalf("%q still running after 20s", args)
			}
			if code != 2 {
				t.Fatalf("%q exited %d, want 2; stderr:\n%s", args, code, c.StderrTail(10))
			}
			if strings.TrimSpace(c.StderrTail(5)) == "" {
				t.Fatalf("%q printed nothing on stderr", args)
			}
		})
	}
}

// TestUnreachableDependencies: a role whose broker or store does not
// answer reports Retrying, keeps running, and exits 0 promptly on SIGTERM.
func TestUnreachableDependencies(t *testing.T) {
	bin := Binary(t)
	const deadKafka, deadMongo = "127.0.0.1:1", "mongodb://127.0.0.1:1/krl_unreachable"
	cases := []struct {
		args     []string
		endpoint string
	}{
		{[]string{"producer", "--interval", "100ms"}, "kafka"},
		{[]string{"consumer", "current"}, "kafka"},
		{[]string{"consumer", "usage"}, "mongo"}, // it loads its checkpoints first
		{[]string{"consumer", "query"}, "mongo"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{}, tc.args...), "--brokers", deadKafka, "--mongo", deadMongo, "--topic", "sensor-data")
			c := Start(t, bin, args...)
			ev := c.Await("retrying", func(e status.Event) bool {
				return e.Type == status.Retrying && e.Endpoint == tc.endpoint
			}, 30*time.Second)
			if ev.Error == "" {
				t.Errorf("retrying event without an error text: %+v", ev)
			}
			if tc.args[len(tc.args)-1] == "query" {
				url := c.URL(5 * time.Second)
				var body map[string]any
				code, err := GetJSON(url+"/usage", &body)
				if err != nil || code != 503 || body["error"] == nil {
					t.Errorf("/usage with the store down: %d %v %v; want 503 with an error", code, body, err)
				}
				code, err = GetJSON(url+"/healthz", &body)
				if err != nil || code != 503 {
					t.Errorf("/healthz with the store down: %d %v %v; want 503", code, body, err)
				}
			}
			code, took := c.Stop()
			if code != 0 || took > 5*time.Second {
				t.Fatalf("after SIGTERM: exit %d in %s; want 0 within 5s", code, took)
			}
		})
	}
}

// TestQueryStoreOutage: consumer-query answers exact totals, 503 while its
// store is down, and recovers by itself when the store is back.
func TestQueryStoreOutage(t *testing.T) {
	bin := Binary(t)
	dir := t.TempDir()
	st := Start(t, bin, "store", "--listen", "127.0.0.1:0", "--data-dir", dir)
	addr := st.Listening("mongo", 30*time.Second)
	uri := "mongodb://" + addr + "/krl_e2e_query"

	// Deltas whose float sum is not exact (0.1 + 0.2 != 0.3 in binary).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]store.Summary{}
	for _, d := range []struct {
		id     string
		dh, dk float64
	}{{"sensor-02", 0.1, 0.7}, {"sensor-01", 0.2, 0.01}, {"sensor-02", 0.2, 0.29}, {"sensor-01", 0.1, 0}} {
		rec := store.UsageRecord{Usage: telemetry.Usage{SensorID: d.id, Date: "2026-01-01", DeltaHours: d.dh, DeltaKm: d.dk},
			Effect: store.WriteID()}
		app, err := s.AppendUsage(ctx, sums[d.id], rec)
		if err != nil {
			t.Fatal(err)
		}
		sums[d.id] = app.Summary
		if err := s.SaveCheckpoint(ctx, store.Checkpoint{SensorID: d.id, Summary: app.Summary}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close(ctx)
	want := UsageBody{
		Sensors: []UsageLine{
			{SensorID: "sensor-01", TotalHours: 0.3, TotalKm: 0.01, Records: 2},
			{SensorID: "sensor-02", TotalHours: 0.3, TotalKm: 0.99, Records: 2},
		},
		Total: UsageLine{TotalHours: 0.6, TotalKm: 1, Records: 4},
	}

	qry := Start(t, bin, "consumer", "query", "--mongo", uri, "--brokers", "127.0.0.1:1")
	url := qry.URL(30 * time.Second)
	qry.Await("query connected to the store", func(e status.Event) bool {
		return e.Type == status.Connected && e.Endpoint == "mongo"
	}, 30*time.Second)
	exact := func() error {
		var got UsageBody
		code, err := GetJSON(url+"/usage", &got)
		if err != nil || code != 200 {
			return fmt.Errorf("/usage: %d %v", code, err)
		}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			return fmt.Errorf("/usage = %+v, want %+v", got, want)
		}
		return nil
	}
	if err := exact(); err != nil {
		t.Fatal(err)
	}

	mark := qry.Mark()
	if code, _ := st.Stop(); code != 0 {
		t.Fatalf("store exited %d on SIGTERM", code)
	}
	qry.AwaitFrom(mark, "query retrying the store", func(e status.Event) bool {
		return e.Type == status.Retrying && e.Endpoint == "mongo"
	}, 30*time.Second)
	var body map[string]any
	if code, err := GetJSON(url+"/usage", &body); err != nil || code != 503 || body["error"] == nil {
		t.Fatalf("/usage with the store down: %d %v %v; want 503 with an error", code, body, err)
	}

	mark = qry.Mark()
	st2 := Start(t, bin, "store", "--listen", addr, "--data-dir", dir)
	st2.Listening("mongo", 30*time.Second)
	qry.AwaitFrom(mark, "query reconnected", func(e status.Event) bool {
		return e.Type == status.Connected && e.Endpoint == "mongo"
	}, 30*time.Second)
	AwaitCondition(t, "/usage answers again after the store restart", 15*time.Second, 100*time.Millisecond, exact)
	if code, took := qry.Stop(); code != 0 {
		t.Errorf("consumer-query exited %d after SIGTERM (%s)", code, took)
	}
}
