package lab

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// Scale runs n (1–3) instances of consumer-usage in its group, each its
// own child process and row: consumer-usage, consumer-usage-2,
// consumer-usage-3. Scaling up defines and starts the missing ones with
// consumer-usage's arguments and an --instance-id of their own (static
// membership needs one per member); scaling down stops (SIGTERM) the
// highest-numbered ones and removes their rows. consumer-usage itself is
// never removed, and its state is left as it is.
func (l *Lab) Scale(n int) error {
	if n < 1 || n > board.MaxUsageInstances {
		return fmt.Errorf("scale consumer-usage %d: want 1 to %d instances", n, board.MaxUsageInstances)
	}
	if brokers, mongo := l.Addresses(); brokers == "" || mongo == "" {
		return errors.New("scale: the broker or the store has no address yet")
	}
	// One step, and not in the middle of a reset-lab or of a mode or
	// reset switch (either would miss an instance being added).
	l.changeMu.Lock()
	defer l.changeMu.Unlock()
	have := l.usageInstances()
	if len(have) < n {
		// Under earliest the new instances name consumer-usage's group.
		l.awaitUsageGroup()
	}
	for i := len(have) + 1; i <= n; i++ {
		name := board.UsageInstance(i)
		l.emit(board.ProcAdded{Name: name, At: time.Now()})
		// Tier 1 like the other roles: the supervisor stops it with them at
		// Shutdown, so it never outlives the dashboard.
		if err := l.sup.Define(l.roleSpec(name)); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
		if err := l.Start(name); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
	}
	for i := len(have); i > n; i-- {
		name := board.UsageInstance(i)
		if pid := l.sup.PID(name); pid != 0 {
			if err := l.Stop(name); err != nil {
				return fmt.Errorf("scale: %w", err)
			}
			// The row goes once it shows the exit: removed first, the exit
			// would reach a board that no longer knows the process.
			l.waitBoard(2*time.Second, func(b *board.Board) bool {
				e := b.LastExit(name)
				return e != nil && e.PID == pid
			})
		}
		l.emit(board.ProcRemoved{Name: name, At: time.Now()})
		l.mu.Lock()
		delete(l.settings.delays, name) // an instance added again starts with none
		l.mu.Unlock()
	}
	if len(have) != n {
		l.Note(fmt.Sprintf("consumer-usage scaled from %d to %d instance(s) in one group", len(have), n))
	}
	return nil
}

// usageInstances lists the consumer-usage instances on the board.
func (l *Lab) usageInstances() []string {
	var names []string
	l.Observe(func(b *board.Board) { names = b.UsageInstances() })
	return names
}

// SetEffectDelay makes consumer-usage instance name hold each usage write
// for d before it reaches the store: at once over its HTTP endpoint (POST
// /effect-delay) when it runs, and from its next starts (--effect-delay).
func (l *Lab) SetEffectDelay(name string, d time.Duration) error {
	if !board.IsUsage(name) {
		return fmt.Errorf("effect delays exist only on consumer-usage instances, not %s", name)
	}
	if d < 0 || d > maxEffectDelay {
		return fmt.Errorf("effect delay %s: want 0 to %s", d, maxEffectDelay)
	}
	l.changeMu.Lock()
	defer l.changeMu.Unlock()
	var shown bool
	l.Observe(func(b *board.Board) { shown = b.Has(name) })
	if !shown {
		return fmt.Errorf("%s is not running in this lab (scale consumer-usage first)", name)
	}
	l.changeSettings(nil, func(s *settings) { s.delays[name] = d })
	if err := l.sup.Define(l.roleSpec(name)); err != nil {
		return err
	}
	if !l.sup.Running(name) {
		return nil
	}
	addr, err := l.awaitHTTP(name, 10*time.Second)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return postControl(ctx, addr, "/effect-delay", url.Values{"delay": {d.String()}}, "set effect delay "+d.String(), nil)
}

// maxEffectDelay is consumer-usage's bound on --effect-delay.
const maxEffectDelay = time.Minute

// usageGroupArgLocked is consumer-usage instance name's --group ("":
// none); l.mu is held.
func (l *Lab) usageGroupArgLocked(name string) string {
	if l.settings.reset != lesson.Earliest {
		return l.usageGroupLocked()
	}
	// earliest picks a fresh group of its own (consumer usage --reset).
	// The other instances join the one consumer-usage picked, so the
	// group is still one group; before it is known they pick their own.
	if name == board.Usage {
		return ""
	}
	return l.mirror.GroupID(board.Usage)
}

// restartUsageInstances gives every consumer-usage instance its arguments
// as the settings say now and restarts the running ones (consumer-usage
// first: under earliest the others join the group it picks). It reports
// whether any was restarted.
func (l *Lab) restartUsageInstances() (restarted bool, err error) {
	names := l.usageInstances()
	for _, name := range names {
		if err := l.sup.Define(l.roleSpec(name)); err != nil {
			return restarted, err
		}
		if !l.sup.Running(name) {
			continue
		}
		if err := l.Restart(name); err != nil {
			return restarted, err
		}
		restarted = true
		if name == board.Usage && len(names) > 1 {
			l.awaitUsageGroup()
		}
	}
	return restarted, nil
}

// awaitUsageGroup waits (briefly) until a running consumer-usage under
// earliest has said its group, so the other instances' arguments can name
// it (under latest they name the lab's group and need not wait).
func (l *Lab) awaitUsageGroup() {
	l.waitBoard(10*time.Second, func(b *board.Board) bool {
		if l.settings.reset != lesson.Earliest { // l.mu is held by waitBoard
			return true
		}
		// The board's row must be the incarnation running now: right after
		// a restart it may still show the last one's group.
		pid := l.sup.PID(board.Usage)
		return pid == 0 || (b.PID(board.Usage) == pid && b.GroupID(board.Usage) != "")
	})
}
