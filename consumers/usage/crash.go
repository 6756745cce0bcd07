package usage

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// CrashArm holds at most one armed crash point. It is shared between the
// message loop and the HTTP server, hence the mutex.
type CrashArm struct {
	mu    sync.Mutex
	point lesson.CrashPoint // "" = disarmed
	after int               // crash at the after-th message that reaches point
	seen  int               // messages that reached point since it was armed
}

// Armed describes the armed crash point.
type Armed struct {
	Point lesson.CrashPoint `json:"point"`
	After int               `json:"after"`
	Seen  int               `json:"seen"`
}

// ValidateArm checks an arming request without arming anything.
func ValidateArm(point lesson.CrashPoint, after int) error {
	if _, err := lesson.ParseArmablePoint(string(point)); err != nil {
		return err
	}
	if after < 1 {
		return fmt.Errorf("crash after %d messages: want 1 or more", after)
	}
	return nil
}

// Arm arms point to fire at the after-th message that reaches it from now on.
func (a *CrashArm) Arm(point lesson.CrashPoint, after int) error {
	if err := ValidateArm(point, after); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.point, a.after, a.seen = point, after, 0
	return nil
}

// Disarm removes the armed point, if any.
func (a *CrashArm) Disarm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.point, a.after, a.seen = "", 0, 0
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
func (a *CrashArm) reach(point lesson.CrashPoint) bool {
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
