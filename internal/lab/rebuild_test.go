package lab

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// currentHTTP stands in for consumer-current's POST /rebuild: it says
// what it prepares, and, with save, that it saved it.
type currentHTTP struct {
	sup  *fakeSup
	save bool
	asks []string
}

func (c *currentHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := r.URL.Query().Get("strategy")
	c.asks = append(c.asks, s)
	c.sup.status(board.Current, status.Event{Type: status.Prepares, Strategy: s})
	if c.save {
		c.sup.status(board.Current, status.Event{Type: status.Prepared, Strategy: s, Sensors: 10})
	}
	w.WriteHeader(http.StatusOK)
}

// The rebuild key cycles replay → snapshot → changelog → replay from what
// the board shows, sets the next start's flags, tells a running
// consumer-current and returns once it saved what it prepares.
func TestCycleRebuild(t *testing.T) {
	tl := newTestLab(t)
	if args := tl.sup.Args(board.Current); !slices.Contains(args, "--rebuild") || !slices.Contains(args, "replay") ||
		!slices.Contains(args, tl.snapshotPath()) {
		t.Fatalf("consumer-current's args %q: want --rebuild replay and the run directory's snapshot", args)
	}
	// Not running: only the next start's arguments change.
	s, err := tl.CycleRebuild()
	if err != nil || s != string(lesson.Snapshot) {
		t.Fatalf("cycle on a stopped consumer-current: %q, %v", s, err)
	}
	if tl.sup.Running(board.Current) {
		t.Fatal("B started consumer-current")
	}
	if args := tl.sup.Args(board.Current); !slices.Contains(args, "snapshot") {
		t.Fatalf("next start's args %q", args)
	}

	h := &currentHTTP{sup: tl.sup, save: true}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().(*net.TCPAddr).String()
	tl.sup.onStart = func(name string, pid int) {
		if name == board.Current {
			tl.sup.status(name, status.Event{Type: status.Listening, Endpoint: "http", Addr: addr})
		}
	}
	if err := tl.Start(board.Current); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		s, err := tl.CycleRebuild()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if want := []string{"changelog", "replay", "snapshot"}; !slices.Equal(got, want) || !slices.Equal(h.asks, want) {
		t.Fatalf("cycle %v, asked %v, want %v", got, h.asks, want)
	}
	tl.settle(t)
	tl.uiBoard(func(b *board.Board) {
		if v := b.Process(board.Current); b.Rebuild() != "snapshot" || v.Current.Prepared != "snapshot" {
			t.Fatalf("the UI board: next start %q, prepared %q", b.Rebuild(), v.Current.Prepared)
		}
	})
	if err := tl.SetRebuild("compact"); err == nil {
		t.Fatal("an unknown strategy was taken")
	}
}
