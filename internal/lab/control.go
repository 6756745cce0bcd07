package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// The methods below are the lab's operations on the run. Keys, script
// lines and scenario steps reach them through one handler table (Do,
// do.go); each shows what it does on the board (through emit) before and
// after it acts, so the TUI's board and the lab's own board learn it the
// same way. Each blocks until the supervisor has acted.

// act shows a lifecycle request ("crashing…"), performs it, and reports
// the outcome (an error reverts the pending state on the board).
func (l *Lab) act(name, op string, f func(string) error) error {
	l.emit(board.Request{At: time.Now(), Name: name, Op: op})
	err := f(name)
	l.emit(board.RequestDone{At: time.Now(), Name: name, Op: op, Err: err})
	return err
}

// Crash SIGKILLs the process group: a real crash, no cleanup. It returns
// once the board has the exit, so a "crash X" then "restart X" never shows
// the crash it asked for as an unexpected one.
func (l *Lab) Crash(name string) error {
	return l.act(name, board.OpCrash, func(name string) error {
		pid := l.sup.PID(name)
		if err := l.sup.Crash(name); err != nil {
			return err
		}
		l.waitBoard(2*time.Second, func(b *board.Board) bool {
			e := b.Process(name).LastExit
			return pid == 0 || (e != nil && e.PID == pid)
		})
		return nil
	})
}

// Stop stops a process gracefully (SIGTERM, SIGKILL after a timeout).
func (l *Lab) Stop(name string) error { return l.act(name, board.OpStop, l.sup.Stop) }

// Start starts a process that is not running.
func (l *Lab) Start(name string) error {
	return l.act(name, board.OpStart, l.starter(name, l.sup.Start))
}

// Restart stops the process if it runs, then starts it.
func (l *Lab) Restart(name string) error {
	return l.act(name, board.OpRestart, l.starter(name, l.sup.Restart))
}

// starter is how name is (re)started: while the lesson's processes could
// not be launched (an unreachable broker or store), starting any of them
// tries the whole launch again.
func (l *Lab) starter(name string, f func(string) error) func(string) error {
	if !slices.Contains(roles, name) || !l.launchFailed() {
		return f
	}
	return func(string) error { return l.launchRoles(context.Background()) }
}

// Tail returns the last n lines the process wrote to stderr.
func (l *Lab) Tail(name string, n int) []string { return l.sup.Tail(name, n) }

// ArmCrash arms a crash point of consumer-usage over its HTTP endpoint
// (lesson.NoCrashPoint disarms it).
//
// The process announces the arm on its status stream before it replies,
// and arms only once the reply is flushed. A reply lost all the same (the
// connection cut as the process dies) is not taken for a failure when the
// announcement arrived: the point was armed, and may already have fired.
func (l *Lab) ArmCrash(name, point string) error {
	if name != board.Usage {
		return fmt.Errorf("crash points exist only on %s", board.Usage)
	}
	if _, err := lesson.ParseCrashPoint(point); err != nil {
		return err
	}
	l.procMu.Lock()
	defer l.procMu.Unlock()
	return l.armLocked(name, point)
}

func (l *Lab) armLocked(name, point string) error {
	addr, err := l.awaitHTTP(name, 10*time.Second)
	if err != nil {
		return err
	}
	pid := l.sup.PID(name)
	before := l.armsAnnounced(name, pid)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = postControl(ctx, addr, "/crash-at", url.Values{"point": {point}}, fmt.Sprintf("arm crash point %q", point), nil)
	var unanswered *url.Error
	if errors.As(err, &unanswered) && l.awaitArmAnnounced(name, pid, before, 2*time.Second) {
		return nil // armed, and it crashed at the point before it answered
	}
	if err != nil {
		return err
	}
	// The next cycle reads the armed point from the board: wait for the
	// announcement to be on it.
	l.awaitArmAnnounced(name, pid, before, 2*time.Second)
	return nil
}

// armNote counts the crash point announcements of one incarnation.
type armNote struct {
	pid, n int
}

// armsAnnounced is how many arms (or disarms) pid has announced so far.
func (l *Lab) armsAnnounced(name string, pid int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.arms[name]; a.pid == pid {
		return a.n
	}
	return 0
}

// awaitArmAnnounced waits until pid announces an arm after the before-th.
func (l *Lab) awaitArmAnnounced(name string, pid, before int, timeout time.Duration) bool {
	return l.waitBoard(timeout, func(*board.Board) bool {
		a := l.arms[name] // l.mu is held by waitBoard
		return a.pid == pid && a.n > before
	})
}

// awaitHTTP returns the HTTP address of a running process, waiting while
// it has just been started and has not announced it yet: a script's
// "restart consumer-usage" followed by "crash-at consumer-usage ..." must
// not fail because the new process is a few milliseconds from listening.
func (l *Lab) awaitHTTP(name string, timeout time.Duration) (string, error) {
	var addr string
	l.waitBoard(timeout, func(*board.Board) bool {
		addr = l.httpAddrLocked(name)
		return addr != "" || !l.sup.Running(name)
	})
	switch {
	case addr != "":
		return addr, nil
	case !l.sup.Running(name):
		return "", fmt.Errorf("%s is not running", name)
	}
	return "", fmt.Errorf("%s is not listening on HTTP %s after its start", name, timeout)
}

// postControl asks a child's control endpoint (POST http://addr/path?query)
// and decodes its JSON answer into reply (nil: the answer is not read).
// An answer other than 200 is an error with the answer's "error" (or its
// body); a request that got no answer wraps the *url.Error. what names
// the request in every error.
func postControl(ctx context.Context, addr, path string, query url.Values, what string, reply any) error {
	target := "http://" + addr + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var answer struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &answer) != nil || answer.Error == "" {
			answer.Error = strings.TrimSpace(string(body))
		}
		return fmt.Errorf("%s: %s: %s", what, resp.Status, answer.Error)
	}
	if reply != nil && json.Unmarshal(body, reply) != nil {
		return fmt.Errorf("%s: %s: %s", what, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// WaitCaughtUp returns once consumer-current is caught up and
// consumer-usage's committed offsets reach the high watermarks, as the
// board sees them.
//
// It then waits for the state, usage and audit to be polled once more, so
// that a report taken right after (wait-caught-up, then quit) shows the
// caught-up run and not answers read a moment before the last writes.
func (l *Lab) WaitCaughtUp(ctx context.Context) error {
	var since time.Time
	var hwm map[int32]int64
	cond := func(b *board.Board) bool {
		if !b.CaughtUp() {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			// The wall clock, not the board's: the board's clock moves
			// only with Ticks and can be older than the commit sample just
			// seen, and a usage poll asked in between would miss the last
			// writes that sample stands for.
			since = time.Now()
			hwm, _ = b.HighWatermarks()
		}
		return b.RefreshedSince(since, hwm)
	}
	for {
		if l.waitBoard(time.Second, cond) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			l.mu.Lock()
			behind := l.mirror.Behind()
			if behind == "" {
				behind = "caught up, but the sensors, the usage or the audit were not read again since"
			}
			l.mu.Unlock()
			l.Note("wait-caught-up gave up: " + behind)
			return err
		}
	}
}

// ResetLab starts a new baseline (R, reset-lab): consumer-usage stops,
// its usage records and checkpoints are cleared, and it starts again in a
// group of its own with reset latest, so it reads on from the current end
// of the topic. Usage then accumulates from zero and the drift is exactly
// 0 until a crash makes it move. Its mode is kept.
func (l *Lab) ResetLab() error {
	l.changeMu.Lock()
	defer l.changeMu.Unlock()
	return l.newBaselineLocked("reset lab", nil)
}

// newBaselineLocked is ResetLab's work (changeMu held), what naming it in
// its notes and errors; meanwhile, if set, runs once every consumer-usage
// instance has stopped, before the store is cleared.
func (l *Lab) newBaselineLocked(what string, meanwhile func(context.Context) error) error {
	if l.db == nil {
		return fmt.Errorf("%s: the store is not connected yet", what)
	}
	l.mu.Lock()
	l.resets++
	l.resetting = true
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.resetting = false
		l.mu.Unlock()
	}()
	var total board.UsageRow
	l.Observe(func(b *board.Board) { total = b.Usage().Total })
	l.Note(what + ": stopping consumer-usage, clearing its usage records and checkpoints" + clearing(total))
	// Every instance stops before the drop (a live one would write into
	// the new baseline), the highest-numbered first.
	instances := l.usageInstances()
	for i := len(instances) - 1; i >= 0; i-- {
		if name := instances[i]; l.sup.Running(name) {
			if err := l.Stop(name); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if meanwhile != nil {
		if err := meanwhile(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := l.db.Drop(ctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if l.yoursDB != nil {
		if err := l.yoursDB.DropDatabase(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	// A new group with reset latest starts at the end (earliest would
	// replay the whole topic into the fresh baseline).
	l.changeSettings(nil, func(s *settings) { s.baseline++; s.reset = lesson.Latest })
	n := l.settingsNow().baseline
	for _, name := range instances {
		if err := l.sup.Define(l.roleSpec(name)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := l.Start(name); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	l.Note(fmt.Sprintf("new baseline #%d: consumer-usage reads on from the end of the topic in group %s; usage counts from 0",
		n, l.usageGroup()))
	return nil
}

// clearing says what a reset-lab wipes out, as the usage panel shows it.
func clearing(total board.UsageRow) string {
	if total.Recorded == nil {
		return ""
	}
	s := " (" + board.Plural(total.Recorded.Records, "record")
	if total.Drift != nil {
		s += fmt.Sprintf(", drift %+.2f h / %+.2f km: %s", total.Drift.Hours(), total.Drift.Km(), total.Verdict)
	}
	return s + ")"
}

// InjectBad makes the running producer publish n malformed records, every
// kind in turn (0: one of each kind), over its HTTP endpoint (POST
// /inject-bad), as the arm of a crash point goes to consumer-usage's. It
// returns once every record has its delivery report, with how many were
// delivered; the consumers then count and skip them, and consumer-usage
// forwards them to the dead-letter topic.
func (l *Lab) InjectBad(n int) (delivered int, err error) {
	err = l.act(board.Producer, board.OpInjectBad, func(name string) error {
		// A producer opens its endpoint once it has read the topic, so
		// while the broker is away this waits for the broker too.
		addr, err := l.awaitHTTP(name, 40*time.Second)
		if err != nil {
			return fmt.Errorf("the producer is not publishing yet (it waits for the broker): %w", err)
		}
		q := url.Values{}
		if n > 0 {
			q.Set("n", strconv.Itoa(n))
		}
		// While the broker is away the records wait in the producer's
		// queue: librdkafka reports each within the message timeout.
		ctx, cancel := context.WithTimeout(context.Background(), kafkacfg.ProducerMessageTimeout+20*time.Second)
		defer cancel()
		var res struct {
			Delivered int `json:"delivered"`
		}
		err = postControl(ctx, addr, "/inject-bad", q, "inject bad records", &res)
		delivered = res.Delivered
		return err
	})
	return delivered, err
}
