package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// TestFreezeToggleAndStop: z freezes and thaws through the supervisor, both
// boards show it, and a frozen process is still stopped.
func TestFreezeToggleAndStop(t *testing.T) {
	tl := newTestLab(t)
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
	frozen, err := tl.ToggleFreeze(board.Usage)
	if err != nil || !frozen {
		t.Fatalf("first z: frozen %v err %v", frozen, err)
	}
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if v := b.Process(board.Usage); v.State != board.Frozen || v.Health.Word != board.HealthFrozen {
			t.Fatalf("UI board after freeze: %s %+v", v.State, v.Health)
		}
	})
	if r := tl.Report(); r.Processes[2].Name != board.Usage || r.Processes[2].Health != board.HealthFrozen || r.Processes[2].State != "frozen" {
		t.Fatalf("report %+v", r.Processes[2])
	}
	frozen, err = tl.ToggleFreeze(board.Usage)
	if err != nil || frozen {
		t.Fatalf("second z: frozen %v err %v", frozen, err)
	}
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if v := b.Process(board.Usage); v.State == board.Frozen || v.Frozen {
			t.Fatalf("UI board after thaw: %s", v.State)
		}
	})
	if err := tl.Freeze(board.Usage); err != nil {
		t.Fatal(err)
	}
	if err := tl.Stop(board.Usage); err != nil {
		t.Fatal(err)
	}
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if v := b.Process(board.Usage); v.State != board.Stopped || v.Frozen || v.Health.Word != board.HealthDown {
			t.Fatalf("after stop of a frozen process: %s frozen=%v %+v", v.State, v.Frozen, v.Health)
		}
	})
	// Not running: the error reaches the caller and the timeline.
	if err := tl.Freeze(board.Usage); !errors.Is(err, supervisor.ErrNotRunning) {
		t.Fatalf("freeze of a stopped process: %v", err)
	}
}

// TestPollHealth: the lab reads /healthz (a 503 is an answer) and skips a
// frozen process.
func TestPollHealth(t *testing.T) {
	tl := newTestLab(t)
	var stuck atomic.Bool
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		if stuck.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"status":"stuck","stuck_for_ms":12000,"stuck_after_ms":10000,"lag":5}`)
			return
		}
		fmt.Fprint(w, `{"status":"ok","stuck_for_ms":0,"stuck_after_ms":10000,"lag":0}`)
	}))
	defer srv.Close()
	tl.sup.onStart = func(name string, pid int) {
		tl.sup.status(name, status.Event{Type: status.Listening, Endpoint: "http", Addr: srv.Listener.Addr().String()})
	}
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
	if addr, err := tl.awaitHTTP(board.Usage, 5*time.Second); err != nil || addr == "" {
		t.Fatalf("address %q %v", addr, err)
	}
	ctx := context.Background()
	tl.pollHealth(ctx)
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if h := b.Process(board.Usage).Health; h.Word != board.HealthOK {
			t.Fatalf("ok answer: %+v", h)
		}
	})
	stuck.Store(true)
	tl.pollHealth(ctx)
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if h := b.Process(board.Usage).Health; h.Word != board.HealthStuck || h.For < 12*time.Second {
			t.Fatalf("503 answer: %+v", h)
		}
	})
	if err := tl.Freeze(board.Usage); err != nil {
		t.Fatal(err)
	}
	before := asked.Load()
	tl.pollHealth(ctx)
	if asked.Load() != before {
		t.Fatal("a frozen process was asked")
	}
}
