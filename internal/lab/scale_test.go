package lab

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

const usage2, usage3 = "consumer-usage-2", "consumer-usage-3"

func TestScaleUpAndDown(t *testing.T) {
	tl := newTestLab(t)
	tl.sup.onStart = func(name string, pid int) {
		if name == board.Usage {
			tl.sup.status(name, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"})
		}
	}
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, -1} {
		if err := tl.Scale(n); err == nil || !strings.Contains(err.Error(), "want 1 to 3") {
			t.Fatalf("Scale(%d) = %v", n, err)
		}
	}
	if err := tl.Scale(3); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{usage2, usage3} {
		if !tl.sup.Running(name) {
			t.Fatalf("%s not started", name)
		}
		args := strings.Join(tl.sup.Args(name), " ")
		if !strings.Contains(args, "consumer usage ") || !strings.Contains(args, "--instance-id "+name) ||
			!strings.Contains(args, "--mode naive --reset latest") {
			t.Fatalf("%s args: %s", name, args)
		}
	}
	if args := tl.sup.Args(board.Usage); slices.Contains(args, "--instance-id") {
		t.Fatalf("consumer-usage's args changed: %q", args)
	}
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if got := b.UsageInstances(); !slices.Equal(got, []string{board.Usage, usage2, usage3}) {
			t.Fatalf("UI rows %v", got)
		}
	})

	// m restarts every running instance with the new mode; a stopped one
	// keeps it for its start.
	if err := tl.Stop(usage3); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{board.Usage: tl.sup.PID(board.Usage), usage2: tl.sup.PID(usage2)}
	mode, restarted, err := tl.ToggleUsageMode()
	if err != nil || !restarted || mode != "guarded" {
		t.Fatalf("toggle: %s %v %v", mode, restarted, err)
	}
	for name, pid := range pids {
		if now := tl.sup.PID(name); now == 0 || now == pid {
			t.Fatalf("%s not restarted (pid %d, was %d)", name, now, pid)
		}
	}
	if tl.sup.Running(usage3) {
		t.Fatal("m started the stopped consumer-usage-3")
	}
	for _, name := range []string{board.Usage, usage2, usage3} {
		if !slices.Contains(tl.sup.Args(name), "guarded") {
			t.Fatalf("%s args %q", name, tl.sup.Args(name))
		}
	}

	// Scaling again to 3 starts nothing new; down to 1 stops and removes.
	if err := tl.Scale(3); err != nil {
		t.Fatal(err)
	}
	if err := tl.Scale(1); err != nil {
		t.Fatal(err)
	}
	if tl.sup.Running(usage2) || tl.sup.Running(usage3) {
		t.Fatal("scaled down, instances still run")
	}
	var exit *board.Exit
	tl.settle(t)
	tl.Observe(func(b *board.Board) {
		if b.Has(usage2) || b.Has(usage3) || b.Scaled() {
			t.Fatalf("rows after scale 1: %v", b.Names())
		}
		exit = b.Process(board.Usage).LastExit
	})
	if !tl.sup.Running(board.Usage) || exit == nil || !exit.Deliberate {
		t.Fatalf("consumer-usage touched by scale down? running %v", tl.sup.Running(board.Usage))
	}
	tl.uiBoard(func(b *board.Board) {
		if b.Has(usage2) {
			t.Fatal("the UI board kept consumer-usage-2")
		}
	})

	// Up again under earliest: the instance joins consumer-usage's group.
	tl.sup.onStart = func(name string, pid int) {
		if name == board.Usage {
			tl.sup.status(name, status.Event{Type: status.Started, Mode: "guarded", Reset: "earliest", GroupID: "demo-usage-earliest-1234abcd"})
		}
	}
	if _, _, err := tl.ToggleUsageReset(); err != nil {
		t.Fatal(err)
	}
	if err := tl.Scale(2); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(tl.sup.Args(usage2), " "); !strings.Contains(args, "--group demo-usage-earliest-1234abcd") {
		t.Fatalf("consumer-usage-2 under earliest: %s", args)
	}
	if args := tl.sup.Args(board.Usage); slices.Contains(args, "--group") {
		t.Fatalf("consumer-usage under earliest names a group: %q", args)
	}
}

// effectHTTP stands in for consumer-usage's POST /effect-delay.
type effectHTTP struct {
	mu     sync.Mutex
	delays []string
}

func (e *effectHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := r.URL.Query().Get("delay")
	if _, err := time.ParseDuration(d); err != nil || r.Method != http.MethodPost || r.URL.Path != "/effect-delay" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"bad"}`))
		return
	}
	e.mu.Lock()
	e.delays = append(e.delays, d)
	e.mu.Unlock()
	_, _ = w.Write([]byte(`{"effect_delay":"` + d + `"}`))
}

func TestSetEffectDelay(t *testing.T) {
	tl := newTestLab(t)
	h := &effectHTTP{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tl.sup.onStart = func(name string, pid int) {
		tl.sup.status(name, status.Event{Type: status.Listening, Endpoint: "http", Addr: srv.Listener.Addr().String()})
	}
	if err := tl.SetEffectDelay(usage2, time.Second); err == nil {
		t.Fatal("an effect delay on an instance that is not there")
	}
	if err := tl.SetEffectDelay(board.Current, time.Second); err == nil {
		t.Fatal("an effect delay on consumer-current")
	}
	if err := tl.SetEffectDelay(board.Usage, 2*time.Minute); err == nil {
		t.Fatal("a delay over 1m")
	}
	if err := tl.Scale(2); err != nil {
		t.Fatal(err)
	}
	if err := tl.SetEffectDelay(usage2, 8*time.Second); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	got := slices.Clone(h.delays)
	h.mu.Unlock()
	if !slices.Equal(got, []string{"8s"}) {
		t.Fatalf("posted %v", got)
	}
	if args := strings.Join(tl.sup.Args(usage2), " "); !strings.Contains(args, "--effect-delay 8s") {
		t.Fatalf("next start's args: %s", args)
	}
	// A stopped instance takes it at its next start only.
	if err := tl.SetEffectDelay(board.Usage, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(tl.sup.Args(board.Usage), " "); !strings.Contains(args, "--effect-delay 3s") {
		t.Fatalf("consumer-usage's args: %s", args)
	}
	if err := tl.SetEffectDelay(usage2, 0); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(tl.sup.Args(usage2), " "); strings.Contains(args, "--effect-delay") {
		t.Fatalf("delay 0 still in the args: %s", args)
	}
}
