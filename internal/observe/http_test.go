package observe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// unusedAddr returns a loopback address nothing listens on.
func unusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

const stateJSON = `{"group_id":"demo-current-0a1b2c3d","caught_up":true,"processed":1200,"invalid":2,
 "positions":[{"partition":0,"offset":400,"high_watermark":410},{"partition":1,"offset":800,"high_watermark":800}],
 "sensors":[{"sensor_id":"sensor-01","timestamp":1700000000000,"odometry":{"hours_tot":100.25,"km_tot":2000.5},
   "position":{"lat":45.1,"lon":9.2},"partition":1,"offset":799}]}`

const usageJSON = `{"sensors":[{"sensor_id":"sensor-01","total_hours":12.34,"total_km":567.89,"records":40},
 {"sensor_id":"sensor-02","total_hours":0.1,"total_km":0.7,"records":1}],
 "total":{"total_hours":12.44,"total_km":568.59,"records":41}}`

func serve(t *testing.T, path string, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFetchState(t *testing.T) {
	url := serve(t, "/state", 200, stateJSON)
	// The Listening event gives host:port; both forms must work.
	for _, base := range []string{url, strings.TrimPrefix(url, "http://"), url + "/"} {
		s, err := FetchState(context.Background(), base)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		want := State{GroupID: "demo-current-0a1b2c3d", CaughtUp: true, Processed: 1200, Invalid: 2,
			Positions: []status.Position{{Partition: 0, Offset: 400, HighWatermark: 410}, {Partition: 1, Offset: 800, HighWatermark: 800}},
			Sensors: []SensorState{{SensorID: "sensor-01", Timestamp: 1700000000000,
				Odometry: telemetry.Odometry{HoursTot: 100.25, KmTot: 2000.5},
				Position: telemetry.Position{Lat: 45.1, Lon: 9.2}, Partition: 1, Offset: 799}}}
		if s.GroupID != want.GroupID || s.CaughtUp != want.CaughtUp || s.Processed != want.Processed ||
			s.Invalid != want.Invalid || len(s.Positions) != 2 || s.Positions[0] != want.Positions[0] ||
			s.Positions[1] != want.Positions[1] || len(s.Sensors) != 1 || s.Sensors[0] != want.Sensors[0] {
			t.Fatalf("got %+v\nwant %+v", s, want)
		}
	}
}

func TestFetchUsage(t *testing.T) {
	u, err := FetchUsage(context.Background(), serve(t, "/usage", 200, usageJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Sensors) != 2 || u.Sensors[0].SensorID != "sensor-01" || u.Total.Records != 41 {
		t.Fatalf("got %+v", u)
	}
	// Float totals convert to exact hundredths (12.34*100 is 1233.9999...).
	if got, want := u.BySensor()["sensor-01"], (store.Totals{HoursCents: 1234, KmCents: 56789, Records: 40}); got != want {
		t.Fatalf("sensor-01 totals %+v, want %+v", got, want)
	}
	if got, want := u.Total.Totals(), (store.Totals{HoursCents: 1244, KmCents: 56859, Records: 41}); got != want {
		t.Fatalf("total %+v, want %+v", got, want)
	}
}

func TestFetchErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("503 with JSON error", func(t *testing.T) {
		_, err := FetchUsage(ctx, serve(t, "/usage", 503, `{"error":"store unreachable: connection refused"}`))
		var he *HTTPError
		if !errors.As(err, &he) || he.Status != 503 || he.Message != "store unreachable: connection refused" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("503 with a reason code", func(t *testing.T) {
		_, err := FetchUsage(ctx, serve(t, "/usage", 503, `{"error":"store unreachable","reason":"store_unreachable"}`))
		if err == nil || err.Error() != "HTTP 503: store_unreachable: store unreachable" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("500 with text", func(t *testing.T) {
		_, err := FetchState(ctx, serve(t, "/state", 500, "boom\n"))
		var he *HTTPError
		if !errors.As(err, &he) || he.Status != 500 || he.Message != "boom" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("404", func(t *testing.T) {
		if _, err := FetchState(ctx, serve(t, "/usage", 200, usageJSON)); err == nil {
			t.Fatal("no error for 404")
		}
	})
	t.Run("wrong shape", func(t *testing.T) {
		if _, err := FetchUsage(ctx, serve(t, "/usage", 200, `{"sensors":{"a":1}}`)); err == nil {
			t.Fatal("no error for a wrong shape")
		}
	})
	t.Run("nobody listening", func(t *testing.T) {
		if _, err := FetchState(ctx, unusedAddr(t)); err == nil {
			t.Fatal("no error for a closed port")
		}
	})
	t.Run("empty address", func(t *testing.T) {
		if _, err := FetchState(ctx, ""); err == nil {
			t.Fatal("no error for an empty address")
		}
	})
}

func TestFetchGivesUpOnSilentServer(t *testing.T) {
	// A consumer stopped with SIGSTOP accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = FetchState(ctx, ln.Addr().String())
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err=%v after %v, want an error at the 300ms deadline", err, time.Since(start))
	}
	// Without a caller deadline HTTPTimeout still applies.
	start = time.Now()
	_, err = FetchState(context.Background(), ln.Addr().String())
	if took := time.Since(start); err == nil || took < HTTPTimeout || took > HTTPTimeout+2*time.Second {
		t.Fatalf("err=%v after %v, want an error after HTTPTimeout", err, took)
	}
}
