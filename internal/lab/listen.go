package lab

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// listenResult ends the wait for a process the lab needs to listen before
// it goes on (the embedded broker and store, a cluster's nodes): its first
// address, or its exit before it announced one.
type listenResult struct {
	addr string
	exit *supervisor.Exited
}

// awaitListen registers the wait for name's first address; call it
// before the start, and forgetListen when the wait is over.
func (l *Lab) awaitListen(name string) <-chan listenResult {
	ch := make(chan listenResult, 1)
	l.mu.Lock()
	l.listening[name] = ch
	l.mu.Unlock()
	return ch
}

func (l *Lab) forgetListen(name string) {
	l.mu.Lock()
	delete(l.listening, name)
	l.mu.Unlock()
}

// noteListen ends name's wait, if one is under way. l.mu is held.
func (l *Lab) noteListenLocked(name string, r listenResult) {
	if ch, ok := l.listening[name]; ok {
		select {
		case ch <- r:
		default:
		}
	}
}

// exitedBeforeListening says why a wait ended without an address: how the
// process ended and its last lines (a broker refusing its flags says why
// there).
func (l *Lab) exitedBeforeListening(name string, e supervisor.Exited) error {
	how := fmt.Sprintf("exit code %d", e.ExitCode)
	if e.Signal != "" {
		how = "killed by " + e.Signal
	}
	var said []string
	for _, line := range l.sup.Tail(name, 4) {
		// The supervisor's own start and exit lines say nothing new.
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "===") {
			said = append(said, line)
		}
	}
	return fmt.Errorf("%s exited before it listened (%s): %s; see %s", name, how, strings.Join(said, " | "),
		filepath.Join(l.cfg.RunDir, "logs", name+".log"))
}
