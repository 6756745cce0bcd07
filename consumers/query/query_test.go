package query

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/api"
	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func TestFlags(t *testing.T) {
	if _, err := mongoHost("http://x"); err == nil {
		t.Fatal("http URI accepted")
	}
	if h, err := mongoHost("mongodb://u:p@db:27017/krl"); err != nil || h != "db:27017" {
		t.Fatalf("mongoHost = %q, %v", h, err)
	}
}

// GET /usage answers, per sensor, the totals and the furthest record they
// include, from the sensor's summary.
func TestUsageAnswerCarriesItsCut(t *testing.T) {
	uri := embeddedtest.StartStore(t, "query")
	ctx := context.Background()
	st, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	var sum store.Summary
	for i, off := range []int64{3, 9, 6} {
		rec := store.UsageRecord{Effect: store.EffectID("t", 1, off), Partition: 1, Offset: off,
			Usage: telemetry.Usage{SensorID: "sensor-01", Date: "2026-11-30", DeltaHours: 0.25, DeltaKm: float64(i)}}
		deadline := time.Now().Add(30 * time.Second)
		for {
			app, err := st.AppendUsage(ctx, sum, rec)
			if err == nil {
				sum = app.Summary
				break
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // waiting for the store to listen
		}
	}
	if err := st.SaveCheckpoint(ctx, store.Checkpoint{SensorID: "sensor-01", Partition: 1, Offset: 9, Summary: sum}); err != nil {
		t.Fatal(err)
	}
	s := &server{st: st, em: status.NewTo(Role, io.Discard), log: slog.New(slog.DiscardHandler), host: "test"}
	srv := httptest.NewServer(s.handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/usage")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u api.Usage
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
		t.Fatal(err)
	}
	want := store.Covered{Totals: store.Totals{HoursCents: 75, KmCents: 300, Records: 3},
		Through: store.Position{Partition: 1, Offset: 9}, Partitions: 1, Furthest: []store.Position{{Partition: 1, Offset: 9}}}
	if len(u.Sensors) != 1 || !reflect.DeepEqual(u.Sensors[0].Covered(), want) {
		t.Fatalf("answer %+v, want %+v", u, want)
	}

	// --source records: a record no checkpoint folds counts too, as
	// everything in the collection does for a consumer of the user's.
	rec := store.UsageRecord{Effect: "x", Partition: 1, Offset: 12,
		Usage: telemetry.Usage{SensorID: "sensor-01", Date: "2026-11-30", DeltaHours: 0.25, DeltaKm: 5}}
	if _, err := st.AppendUsage(ctx, sum, rec); err != nil {
		t.Fatal(err)
	}
	s.fromRecords = true
	resp2, err := http.Get(srv.URL + "/usage")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if err := json.NewDecoder(resp2.Body).Decode(&u); err != nil {
		t.Fatal(err)
	}
	want = store.Covered{Totals: store.Totals{HoursCents: 100, KmCents: 800, Records: 4},
		Through: store.Position{Partition: 1, Offset: 12}, Partitions: 1, Furthest: []store.Position{{Partition: 1, Offset: 12}}}
	if len(u.Sensors) != 1 || !reflect.DeepEqual(u.Sensors[0].Covered(), want) {
		t.Fatalf("records answer %+v, want %+v", u, want)
	}
}

// A 503 says why: the store refused (unreachable) or did not answer in
// time (slow); a store the watcher finds down is not even asked.
func TestUnavailableReasons(t *testing.T) {
	if r, msg := unavailable(context.DeadlineExceeded, true, time.Second); r != ReasonStoreSlow || msg == "" {
		t.Fatalf("timed out: %q %q", r, msg)
	}
	if r, _ := unavailable(io.ErrUnexpectedEOF, false, time.Second); r != ReasonStoreUnreachable {
		t.Fatalf("refused: %q", r)
	}
	s := &server{em: status.NewTo(Role, io.Discard), log: slog.New(slog.DiscardHandler), host: "test",
		known: true, reachable: false, lastErr: "connection refused"}
	srv := httptest.NewServer(s.handler()) // s.st is nil: asking the store would panic
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/usage")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || body["reason"] != ReasonStoreUnreachable || body["error"] == "" {
		t.Fatalf("%d %v", resp.StatusCode, body)
	}
}
