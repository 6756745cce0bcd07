package e2e

import (
	"context"
	"fmt"
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

// yoursScript crashes the consumer twice, each time a second later
// restarted, then pauses the producer and waits until the consumer has
// committed the end of every partition.
const yoursScript = `wait 8s
crash consumer-usage
wait 1s
start consumer-usage
wait 8s
crash consumer-usage
wait 1s
start consumer-usage
wait 6s
pause producer
wait-caught-up 90s
wait 2s
quit
`

// TestYourConsumer runs the Python examples as consumer-usage
// (--usage-cmd) under the same crashes, and checks the lab's account of
// them against the topic and the records, read back independently: the
// guarded one is exact; the naive one over-counts, and every message of
// its drift is named, the causes adding up to the drift to the cent.
func TestYourConsumer(t *testing.T) {
	python := os.Getenv(pythonEnv)
	if python == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: .ci/run installs examples/python/requirements.txt and names its Python", pythonEnv)
		}
		t.Skipf("set %s to a Python with examples/python/requirements.txt installed", pythonEnv)
	}
	examples, err := filepath.Abs("../../examples/python")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"guarded", "naive"} {
		t.Run(kind, func(t *testing.T) {
			d := newDashboard(t)
			cmd := fmt.Sprintf("%s %s", python, filepath.Join(examples, kind+".py"))
			d.startHeadless(yoursScript, "--seed", "42", "--usage-cmd", cmd)
			if code := d.waitExit(4 * time.Minute); code != 0 {
				t.Fatalf("dashboard exited %d:\n%s", code, d.stderr())
			}
			r := d.readReport()
			p := r.proc(t, "consumer-usage")
			if p.Starts != 3 || p.Crashes != 2 || p.Lag == nil || *p.Lag != 0 {
				t.Fatalf("consumer-usage: %d starts, %d crashes, lag %s; want 3, 2, 0", p.Starts, p.Crashes, fmtLag(p.Lag))
			}
			rt := d.readRunTruth()
			recs := yoursRecords(t, strings.TrimSuffix(rt.Mongo, "/krl")+"/krl_yours")
			rt.Checkpoints, rt.Stored = recs.firsts(rt.Topic), recs.totals()
			rt.Expected = ExpectedUsage(rt.Topic, rt.Checkpoints)
			if kind == "guarded" {
				checkUsageExact(t, r, rt)
				return
			}
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
				t.Fatalf("the naive consumer, crashed twice, over-counted no sensor: nothing was shown")
			}
			if n := checkDriftCauses(t, r, rt); n == 0 {
				t.Fatalf("%d sensors over-counted and no cause is named", over)
			}
			for _, s := range r.Sensors {
				for _, c := range s.DriftCauses {
					if n := recs.at[s.SensorID][store.Position{Partition: c.Partition, Offset: c.Offset}]; n != c.Records {
						t.Errorf("%s: cause %+v says %d records, the store holds %d for p%d@%d", s.SensorID, c, c.Records, n, c.Partition, c.Offset)
					}
				}
			}
			t.Logf("naive: %d of %d sensors over-counted, causes by kind %+v", over, len(r.Sensors), r.DriftCausesByKind)
		})
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
