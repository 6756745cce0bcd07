package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

func TestParseFlags(t *testing.T) {
	cfg, err := ParseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != lesson.Naive || cfg.Reset != "latest" || cfg.Group != kafkacfg.UsageGroupID ||
		cfg.HTTP != "127.0.0.1:0" || cfg.CrashPoint != "" || cfg.CrashAfter != 1 {
		t.Errorf("defaults %+v", cfg)
	}
	if g := cfg.ResolveGroup(); g != "demo-usage" {
		t.Errorf("default group %q", g)
	}

	cfg, err = ParseFlags([]string{"--mode", "guarded", "--reset", "earliest", "--crash-at", "after-delta", "--crash-after", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != lesson.Guarded || cfg.CrashPoint != lesson.AfterDelta || cfg.CrashAfter != 3 {
		t.Errorf("parsed %+v", cfg)
	}
	g1, g2 := cfg.ResolveGroup(), cfg.ResolveGroup()
	if !strings.HasPrefix(g1, "demo-usage-earliest-") || len(g1) != len("demo-usage-earliest-")+8 || g1 == g2 {
		t.Errorf("earliest groups %q %q: want fresh demo-usage-earliest-<8 hex>", g1, g2)
	}

	cfg, err = ParseFlags([]string{"--reset", "earliest", "--group", "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.ResolveGroup(); g != "mine" {
		t.Errorf("explicit group with earliest: %q, want mine", g)
	}
	// Naming the default group explicitly keeps it, too.
	cfg, _ = ParseFlags([]string{"--reset", "earliest", "--group", "demo-usage"})
	if g := cfg.ResolveGroup(); g != "demo-usage" {
		t.Errorf("explicit demo-usage with earliest: %q", g)
	}

	for _, bad := range [][]string{
		{"--mode", "careful"}, {"--reset", "middle"}, {"--crash-at", "before-delta"},
		{"--crash-after", "0"}, {"--group", ""}, {"--nope"}, {"stray"},
	} {
		if _, err := ParseFlags(bad); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%v: err %v, want a usage error", bad, err)
		}
	}
}

func TestMainBadFlagsExit2(t *testing.T) {
	if code := Main([]string{"--mode", "careful"}); code != cli.ExitUsage {
		t.Errorf("exit code %d, want %d", code, cli.ExitUsage)
	}
}

func TestHTTP(t *testing.T) {
	arm := &CrashArm{}
	stats := func() Stats { return Stats{Processed: 7, Invalid: 1} }
	tracker := health.NewTracker(time.Second)
	srv := httptest.NewServer(newHandler(lesson.Guarded, "latest", "demo-usage", stats, tracker, arm, &EffectDelay{}, nil,
		slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()

	get := func() healthz {
		t.Helper()
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		want := http.StatusOK
		if tracker.Report(time.Now()).Status == health.Stuck {
			want = http.StatusServiceUnavailable
		}
		if resp.StatusCode != want {
			t.Fatalf("healthz %d, want %d", resp.StatusCode, want)
		}
		var h healthz
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := get(); h.Status != "ok" || h.Mode != lesson.Guarded || h.GroupID != "demo-usage" || h.Stats.Processed != 7 || h.CrashAt != nil {
		t.Errorf("healthz %+v", h)
	}
	// Lag and no progress for longer than --stuck-after: 503, with the numbers.
	past := time.Now().Add(-3 * time.Second)
	tracker.Assign(past, map[int32]int64{0: 10})
	tracker.Watermark(past, 0, 15)
	if h := get(); h.Status != health.Stuck || h.Lag == nil || *h.Lag != 5 || h.StuckForMs < 3000 || h.StuckAfterMs != 1000 {
		t.Errorf("stuck healthz %+v", h)
	}
	tracker.Done(time.Now(), 0, 14, "")
	if h := get(); h.Status != health.OK || !h.CaughtUp {
		t.Errorf("caught-up healthz %+v", h)
	}

	for _, tc := range []struct {
		query string
		code  int
	}{
		{"point=after-delta", http.StatusOK},
		{"point=after-checkpoint&after=4", http.StatusOK},
		{"point=after-lunch", http.StatusBadRequest},
		{"", http.StatusBadRequest},
		{"point=after-delta&after=0", http.StatusBadRequest},
		{"point=after-delta&after=x", http.StatusBadRequest},
		{"point=none", http.StatusOK},
		{"point=after-checkpoint&after=4", http.StatusOK},
	} {
		resp, err := http.Post(srv.URL+"/crash-at?"+tc.query, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("POST /crash-at?%s: %d, want %d", tc.query, resp.StatusCode, tc.code)
		}
	}
	// The last good request wins; bad ones change nothing. The point is
	// armed only once its reply is flushed (http.go), so the answer can
	// reach the client first: the state is awaited, not read at once.
	armedAsLast := func(h healthz) bool {
		return h.CrashAt != nil && h.CrashAt.Point == lesson.AfterCheckpoint && h.CrashAt.After == 4
	}
	h := get()
	for deadline := time.Now().Add(5 * time.Second); !armedAsLast(h) && time.Now().Before(deadline); h = get() {
		time.Sleep(10 * time.Millisecond) // polling the handler's state, not standing in for it
	}
	if !armedAsLast(h) {
		t.Errorf("armed %+v, want after-checkpoint after 4", h.CrashAt)
	}
	resp, err := http.Get(srv.URL + "/crash-at?point=after-delta")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /crash-at: %d, want 405", resp.StatusCode)
	}
}

func TestCrashArmCounts(t *testing.T) {
	arm := &CrashArm{}
	if err := arm.Arm(lesson.AfterDelta, 3); err != nil {
		t.Fatal(err)
	}
	var fired []bool
	for range 2 {
		fired = append(fired, arm.reach(lesson.AfterCheckpoint)) // another point: not counted
	}
	for range 4 {
		fired = append(fired, arm.reach(lesson.AfterDelta))
	}
	want := []bool{false, false, false, false, true, false} // fires once, then disarmed
	for i := range want {
		if fired[i] != want[i] {
			t.Fatalf("fired %v, want %v", fired, want)
		}
	}
}

// flushSpy records what was true when the handler flushed its reply.
type flushSpy struct {
	*httptest.ResponseRecorder
	onFlush func()
}

func (f flushSpy) Flush() { f.onFlush(); f.ResponseRecorder.Flush() }

// TestCrashAtReplyBeforeArm: the arm announced on the status stream and the
// complete reply are out before the point can fire, so a client never gets
// EOF from a process that killed itself between arming and replying.
func TestCrashAtReplyBeforeArm(t *testing.T) {
	arm := &CrashArm{}
	var events bytes.Buffer
	em := status.NewTo("consumer-usage", &events)
	h := newHandler(lesson.Guarded, "latest", "g", func() Stats { return Stats{} }, health.NewTracker(0), arm, &EffectDelay{}, em,
		slog.New(slog.NewTextHandler(io.Discard, nil)))

	flushed := false
	rec := httptest.NewRecorder()
	spy := flushSpy{ResponseRecorder: rec, onFlush: func() {
		flushed = true
		if a, armed := arm.State(); armed {
			t.Errorf("armed (%+v) before the reply was flushed", a)
		}
		if !strings.Contains(events.String(), `"event":"crash_point_armed"`) {
			t.Errorf("reply flushed before the arm was announced; status stream: %q", events.String())
		}
		if got, want := rec.Body.Len(), rec.Header().Get("Content-Length"); want == "" || strconv.Itoa(got) != want {
			t.Errorf("body %d bytes at flush, Content-Length %q", got, want)
		}
	}}
	h.ServeHTTP(spy, httptest.NewRequest(http.MethodPost, "/crash-at?point=after-delta&after=2", nil))
	if !flushed {
		t.Fatal("the reply was never flushed before the handler returned")
	}
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"point":"after-delta"`) {
		t.Errorf("reply %d %s", rec.Code, rec.Body)
	}
	if a, armed := arm.State(); !armed || a.Point != lesson.AfterDelta || a.After != 2 {
		t.Errorf("after the reply: %+v armed=%v, want after-delta after 2", a, armed)
	}
	ev, err := status.Parse(bytes.TrimSpace(events.Bytes()))
	if err != nil || ev.Type != status.CrashPointArmed || ev.Point != string(lesson.AfterDelta) || ev.After != 2 {
		t.Errorf("status event %+v (%v), want crash_point_armed after-delta after 2", ev, err)
	}
}

// TestFinishingOutlivesTheStopByItsGrace: a stop lets the message in hand
// finish; only the grace's end cancels it.
func TestFinishingOutlivesTheStopByItsGrace(t *testing.T) {
	stop, cancelStop := context.WithCancel(context.Background())
	ctx, done := finishing(stop, 200*time.Millisecond)
	defer done()
	cancelStop()
	select {
	case <-ctx.Done():
		t.Fatal("the message's context ended with the stop")
	case <-time.After(50 * time.Millisecond): // well inside the grace
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the message's context outlived its grace")
	}
	// A message that finished releases its context at once, stop or not.
	ctx2, done2 := finishing(context.Background(), time.Hour)
	done2()
	if ctx2.Err() == nil {
		t.Fatal("done did not release the context")
	}
}
