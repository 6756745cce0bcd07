package usage

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Crash points: where in the handling of one message the consumer can be
// made to SIGKILL itself, to show what each recovery strategy does with a
// crash between its writes.
const (
	// PointAfterDelta: the usage record is written, the checkpoint is not.
	// Only messages that wrote a usage record reach it.
	PointAfterDelta = "after-delta"
	// PointAfterCheckpoint: the checkpoint is written, the offset is not
	// stored or committed yet.
	PointAfterCheckpoint = "after-checkpoint"
)

// ParsePoint validates a crash point name.
func ParsePoint(s string) (string, error) {
	switch s {
	case PointAfterDelta, PointAfterCheckpoint:
		return s, nil
	}
	return "", fmt.Errorf("unknown crash point %q (want %s or %s)", s, PointAfterDelta, PointAfterCheckpoint)
}

// CrashArm holds at most one armed crash point. It is shared between the
// message loop and the HTTP server, hence the mutex.
type CrashArm struct {
	mu    sync.Mutex
	point string // "" = disarmed
	after int    // crash at the after-th message that reaches point
	seen  int    // messages that reached point since it was armed
}

// Armed describes the armed crash point.
type Armed struct {
	Point string `json:"point"`
	After int    `json:"after"`
	Seen  int    `json:"seen"`
}

// ValidateArm checks an arming request without arming anything.
func ValidateArm(point string, after int) error {
	if _, err := ParsePoint(point); err != nil {
		return err
	}
	if after < 1 {
		return fmt.Errorf("crash after %d messages: want 1 or more", after)
	}
	return nil
}

// Arm arms point to fire at the after-th message that reaches it from now on.
func (a *CrashArm) Arm(point string, after int) error {
	if err := ValidateArm(point, after); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.point, a.after, a.seen = point, after, 0
	return nil
}

// State reports the armed point, if any.
func (a *CrashArm) State() (Armed, bool) {
	if a == nil {
		return Armed{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return Armed{Point: a.point, After: a.after, Seen: a.seen}, a.point != ""
}

// reach counts a message arriving at point and reports whether the crash
// fires now. A fired point is disarmed (it matters for tests, where the
// "crash" returns).
func (a *CrashArm) reach(point string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.point != point {
		return false
	}
	a.seen++
	if a.seen < a.after {
		return false
	}
	a.point, a.after, a.seen = "", 0, 0
	return true
}

// killSelf is the real crash: announce it, then SIGKILL this process. No
// deferred function, no Close, no commit runs: exactly what kill -9 does.
func killSelf(em *status.Emitter, ev status.Event) {
	em.Emit(ev)
	_ = os.Stdout.Sync()
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered asynchronously; never continue
}
