package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/role"
)

// healthTimeout bounds one GET /healthz: a frozen or hung consumer accepts
// the connection (the kernel does) and never answers.
const healthTimeout = time.Second

var healthClient = &http.Client{Timeout: healthTimeout}

// Freeze SIGSTOPs the process group (the hung-process case) and returns
// once the board shows it frozen.
func (l *Lab) Freeze(name string) error {
	return l.act(name, board.OpFreeze, func(name string) error {
		if err := l.sup.Freeze(name); err != nil {
			return err
		}
		l.waitBoard(2*time.Second, func(b *board.Board) bool { return b.Frozen(name) })
		return nil
	})
}

// Thaw SIGCONTs a frozen process group; it returns once the board shows it
// thawed.
func (l *Lab) Thaw(name string) error {
	return l.act(name, board.OpThaw, func(name string) error {
		if err := l.sup.Thaw(name); err != nil {
			return err
		}
		l.waitBoard(2*time.Second, func(b *board.Board) bool { return !b.Frozen(name) })
		return nil
	})
}

// pollHealth reads GET /healthz of the consumers that serve one, side by
// side (one that does not answer must not delay the other). A frozen
// process is not asked: the board already says frozen.
func (l *Lab) pollHealth(ctx context.Context) {
	var wg sync.WaitGroup
	var names []string
	l.Observe(func(b *board.Board) {
		names = slices.DeleteFunc(b.Names(), func(n string) bool { return !role.Lookup(n).Health })
	})
	for _, name := range names {
		addr, pid := l.httpAddr(name), l.sup.PID(name)
		if addr == "" || pid == 0 || l.sup.Frozen(name) {
			continue
		}
		wg.Go(func() {
			probe := fetchHealth(ctx, name, pid, addr)
			if errors.Is(ctx.Err(), context.Canceled) {
				return
			}
			// Frozen while we asked: its silence says nothing new.
			if probe.Code == 0 && l.sup.Frozen(name) {
				return
			}
			l.emit(probe)
		})
	}
	wg.Wait()
}

// fetchHealth asks one consumer; a non-200 answer with a health report is
// an answer too (503: stuck).
func fetchHealth(ctx context.Context, name string, pid int, addr string) board.HealthProbe {
	probe := board.HealthProbe{Name: name, PID: pid, At: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	if err != nil {
		probe.Err = err
		return probe
	}
	resp, err := healthClient.Do(req)
	if err != nil {
		probe.Err = err
		return probe
	}
	defer resp.Body.Close()
	var r health.Report
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &r)
	}
	if err != nil {
		probe.Err = fmt.Errorf("GET /healthz: %d, unreadable answer: %w", resp.StatusCode, err)
		return probe
	}
	probe.Code, probe.Status = resp.StatusCode, r.Status
	probe.StuckFor = time.Duration(r.StuckForMs) * time.Millisecond
	probe.StuckAfter = time.Duration(r.StuckAfterMs) * time.Millisecond
	return probe
}
