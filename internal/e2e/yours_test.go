package e2e

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// pythonEnv names a Python with examples/python/requirements.txt
// installed (.ci/run makes one).
const pythonEnv = "KRL_PYTHON"

// TestGradeYourConsumer grades the Python examples as consumer-usage
// (--usage-cmd, --scenario grade, the same seed) and checks the lab's
// account against the topic and the records, read back independently: the
// guarded one is exact and the run exits 0; the naive one over-counts, the
// run exits 1, and every message of its drift is named (inferred when its
// records name no message), the causes adding up to the drift to the cent.
func TestGradeYourConsumer(t *testing.T) {
	python := os.Getenv(pythonEnv)
	if python == "" {
		// .ci/run runs it on the lane beside the embedded pass, and checks
		// that it ran.
		t.Skipf("set %s to a Python with examples/python/requirements.txt installed", pythonEnv)
	}
	examples, err := filepath.Abs("../../examples/python")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, args string
		exact      bool
		d          *dashboard
	}{
		{name: "guarded", args: "guarded.py", exact: true},
		{name: "naive", args: "naive.py"},
		{name: "naive-anonymous", args: "naive.py --anonymous"},
	}
	// A lab idles at a tenth of a core and its consumer at less: the three
	// grades run side by side, and are read back one after the other.
	for i := range cases {
		c := &cases[i]
		c.d = newDashboard(t)
		c.d.startHeadless("", "--scenario", "grade", "--seed", "42", "--usage-cmd",
			python+" "+filepath.Join(examples, c.args))
	}
	for _, c := range cases {
		d := c.d
		code := d.waitExit(5 * time.Minute)
		r := d.readReport()
		grade := readGrade(t, d.report)
		t.Logf("%s: exit %d, %s (%.0f s, %d actions)", c.name, code, grade.Checks[0].Observed, grade.Seconds, len(grade.Performed))
		if c.exact != (code == 0) || c.exact != grade.Passed {
			t.Fatalf("%s: exit %d, passed %v: want exact %v\n%s", c.name, code, grade.Passed, c.exact, Tail(d.stderr(), 30))
		}
		if kills := countActions(grade.Performed, "crash consumer-usage"); kills < 8 {
			t.Errorf("%s: the schedule ran %d SIGKILLs, want at least 8: %+v", c.name, kills, grade.Performed)
		}
		rt := d.readRunTruth()
		recs := yoursRecords(t, strings.TrimSuffix(rt.Mongo, "/krl")+"/krl_yours")
		for _, s := range r.Sensors {
			if got, ok := reportUsage(s); !ok || got != recs.sum[s.SensorID] {
				t.Errorf("%s: %s: report usage %+v, the records sum to %+v (cents)", c.name, s.SensorID, got, recs.sum[s.SensorID])
			}
		}
		if c.name == "naive-anonymous" {
			checkInferred(t, r)
			continue
		}
		rt.Checkpoints, rt.Stored = recs.firsts(rt.Topic), recs.totals()
		rt.Expected = ExpectedUsage(rt.Topic, rt.Checkpoints)
		if c.exact {
			checkUsageExact(t, r, rt)
			continue
		}
		checkNaiveGraded(t, r, rt, recs)
	}
}

// checkNaiveGraded: every sensor's drift is its records against the
// topic's deltas over its window, some over-count, and every message of
// the drift is named with the records the store holds for it.
func checkNaiveGraded(t *testing.T, r dashReport, rt runTruth, recs yoursRecs) {
	t.Helper()
	over := 0
	for _, s := range r.Sensors {
		got, want := rt.Stored[s.SensorID], rt.Expected[s.SensorID]
		h, k, ok := reportDrift(s)
		if !ok || h != got.HoursCents-want.HoursCents || k != got.KmCents-want.KmCents {
			t.Errorf("%s: report drift %+v; the records hold %+v, the topic yields %+v (cents)", s.SensorID, s.Drift, got, want)
		}
		if h > 0 {
			over++
		}
	}
	if over == 0 {
		t.Fatalf("the naive consumer over-counted no sensor under the grade")
	}
	if n := checkDriftCauses(t, r, rt); n == 0 {
		t.Fatalf("%d sensors over-counted and no cause is named", over)
	}
	for _, s := range r.Sensors {
		for _, cause := range s.DriftCauses {
			if n := recs.at[s.SensorID][store.Position{Partition: cause.Partition, Offset: cause.Offset}]; n != cause.Records {
				t.Errorf("%s: cause %+v says %d records, the store holds %d", s.SensorID, cause, cause.Records, n)
			}
		}
	}
}

// gradeReport is the report's scenario entry.
type gradeReport struct {
	Passed bool `json:"passed"`
	Checks []struct {
		Observed string `json:"observed"`
	} `json:"checks"`
	Seconds   float64 `json:"seconds"`
	Performed []struct {
		Action string `json:"action"`
	} `json:"performed"`
}

func readGrade(t *testing.T, path string) gradeReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Scenario *gradeReport `json:"scenario"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Scenario == nil || len(r.Scenario.Checks) != 1 {
		t.Fatalf("report's scenario: %v\n%s", err, b)
	}
	return *r.Scenario
}

func countActions(performed []struct {
	Action string `json:"action"`
}, action string) int {
	n := 0
	for _, p := range performed {
		if p.Action == action {
			n++
		}
	}
	return n
}

// checkInferred: records without partition and offset still get their
// drift's messages, each said to be inferred, adding up to the drift.
func checkInferred(t *testing.T, r dashReport) {
	t.Helper()
	named := 0
	for _, s := range r.Sensors {
		h, k, ok := reportDrift(s)
		if !ok {
			t.Errorf("%s: no drift (verdict %s): the records were not placed", s.SensorID, s.Verdict)
			continue
		}
		var ch, ck int64
		for _, c := range s.DriftCauses {
			named++
			if !c.Inferred {
				t.Errorf("%s: cause %+v not said to be inferred", s.SensorID, c)
			}
			ch += store.Cents(c.RecordedHours) - store.Cents(c.ExpectedHours)
			ck += store.Cents(c.RecordedKm) - store.Cents(c.ExpectedKm)
		}
		if ch != h || ck != k {
			t.Errorf("%s: inferred causes sum to %d/%d cents, the drift is %d/%d", s.SensorID, ch, ck, h, k)
		}
	}
	if named == 0 {
		t.Fatal("no inferred cause named")
	}
}

// yoursRecs are a consumer's usage records as this test reads them itself.
type yoursRecs struct {
	sum   map[string]store.Totals
	first map[string]store.Position
	at    map[string]map[store.Position]int
}

// yoursRecords reads every usage record at uri with the driver alone.
func yoursRecords(t *testing.T, uri string) yoursRecs {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	db := uri[strings.LastIndex(uri, "/")+1:]
	cur, err := client.Database(db).Collection("usage").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	out := yoursRecs{sum: map[string]store.Totals{}, first: map[string]store.Position{}, at: map[string]map[store.Position]int{}}
	for cur.Next(ctx) {
		var rec struct {
			SensorID   string  `bson:"sensor_id"`
			DeltaHours float64 `bson:"delta_hours"`
			DeltaKm    float64 `bson:"delta_km"`
			Partition  int32   `bson:"partition"`
			Offset     int64   `bson:"offset"`
		}
		if err := cur.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		s := out.sum[rec.SensorID]
		out.sum[rec.SensorID] = store.Totals{HoursCents: s.HoursCents + cents(rec.DeltaHours), KmCents: s.KmCents + cents(rec.DeltaKm), Records: s.Records + 1}
		pos := store.Position{Partition: rec.Partition, Offset: rec.Offset}
		if f, ok := out.first[rec.SensorID]; !ok || pos.Offset < f.Offset {
			out.first[rec.SensorID] = pos
		}
		if out.at[rec.SensorID] == nil {
			out.at[rec.SensorID] = map[store.Position]int{}
		}
		out.at[rec.SensorID][pos]++
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out.sum) == 0 {
		t.Fatalf("no usage record in %s", db)
	}
	return out
}

func (y yoursRecs) totals() map[string]store.Totals { return y.sum }

// firsts are the windows as checkpoints the helpers read: from each
// sensor's message before its first record (the reference of its first
// delta) to the end of the topic.
func (y yoursRecs) firsts(tp Topic) map[string]store.Checkpoint {
	out := map[string]store.Checkpoint{}
	for id, p := range y.first {
		ref := int64(-1)
		for _, r := range tp.Records {
			if r.Partition != p.Partition || r.Offset >= p.Offset {
				continue
			}
			if m, err := telemetry.Decode(r.Key, r.Value); err == nil && m.SensorID == id {
				ref = r.Offset
			}
		}
		out[id] = store.Checkpoint{SensorID: id, FirstPartition: p.Partition, FirstOffset: ref, Partition: p.Partition, Offset: math.MaxInt64}
	}
	return out
}

// TestYourConsumerBad: a command that exits at once is a crashed row with
// its exit, and one that writes records breaking the schema has them
// counted by reason on the timeline, never summed; the rest of the lab
// runs on.
func TestYourConsumerBad(t *testing.T) {
	python := os.Getenv(pythonEnv)
	if python == "" {
		t.Skipf("set %s to a Python with examples/python/requirements.txt installed", pythonEnv)
	}
	bad := filepath.Join(t.TempDir(), "bad.py")
	if err := os.WriteFile(bad, []byte(`import os, time, pymongo
db = pymongo.MongoClient(os.environ["MONGO_URI"]).get_default_database()
db.usage.insert_many([
    {"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": "1.0", "delta_km": 1},
    {"date": "2026-12-04", "delta_hours": 1, "delta_km": 1},
    {"sensor_id": "sensor-01", "date": "yesterday", "delta_hours": 1, "delta_km": 1},
    {"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": -1.0, "delta_km": 1},
    {"sensor_id": "sensor-02", "date": "2026-12-04", "delta_hours": 0.5, "delta_km": 0.25},
])
print("wrote five records, four malformed", flush=True)
time.sleep(120)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, cmd string
		check     func(t *testing.T, d *dashboard, r dashReport)
	}{
		{"exits at once", "sh -c 'echo no consumer here; exit 3'", func(t *testing.T, d *dashboard, r dashReport) {
			p := r.proc(t, "consumer-usage")
			if p.Crashes != 1 || p.LastExit != "exit 3" {
				t.Errorf("consumer-usage: %d crashes, last exit %v; want 1, exit 3", p.Crashes, p.LastExit)
			}
			if !strings.Contains(readLog(t, d, "consumer-usage"), "no consumer here") {
				t.Errorf("its stdout is not in its log")
			}
		}},
		{"malformed records", python + " " + bad, func(t *testing.T, d *dashboard, r dashReport) {
			line := ""
			for _, l := range strings.Split(d.stderr(), "\n") {
				if strings.Contains(l, "break the schema") {
					line = l
				}
			}
			for _, want := range []string{"4 usage records", "delta_hours not a number: 1", "sensor_id missing or not a string: 1",
				"date not YYYY-MM-DD: 1", "delta_hours negative: 1"} {
				if !strings.Contains(line, want) {
					t.Errorf("the timeline's line on malformed records lacks %q: %q", want, line)
				}
			}
			for _, s := range r.Sensors {
				got, ok := reportUsage(s)
				want := store.Totals{}
				if s.SensorID == "sensor-02" {
					want = store.Totals{HoursCents: 50, KmCents: 25, Records: 1}
				}
				if ok && got != want || !ok && want.Records > 0 {
					t.Errorf("%s: usage %+v, want %+v: only the well-formed record counts", s.SensorID, got, want)
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDashboard(t)
			d.startHeadless("wait 12s\nquit\n", "--usage-cmd", c.cmd)
			if code := d.waitExit(2 * time.Minute); code != 0 {
				t.Fatalf("exit %d:\n%s", code, Tail(d.stderr(), 30))
			}
			r := d.readReport()
			for _, name := range []string{"producer", "consumer-current", "consumer-query"} {
				if p := r.proc(t, name); p.State != "running" {
					t.Errorf("%s is %s: the rest of the lab must run on", name, p.State)
				}
			}
			c.check(t, d, r)
		})
	}
}
