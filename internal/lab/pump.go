package lab

import (
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

func (l *Lab) startPump() {
	l.pumpDone = make(chan struct{})
	go func() { defer close(l.pumpDone); l.pump() }()
}

// pump turns supervisor events into board inputs and keeps the addresses
// the pollers need.
func (l *Lab) pump() {
	for ev := range l.sup.Events() {
		switch e := ev.(type) {
		case supervisor.Started:
			l.mu.Lock()
			l.runPID[e.Name] = e.PID
			delete(l.httpAddrs, e.Name)
			l.mu.Unlock()
			l.emit(board.ProcStarted{Name: e.Name, PID: e.PID, At: e.At})
		case supervisor.Exited:
			l.mu.Lock()
			if l.httpAddrs[e.Name].pid == e.PID {
				delete(l.httpAddrs, e.Name)
			}
			l.noteListenLocked(e.Name, listenResult{exit: &e})
			l.mu.Unlock()
			l.emit(board.ProcExited{Name: e.Name, PID: e.PID, At: e.At, ExitCode: e.ExitCode,
				Signal: e.Signal, Deliberate: e.Deliberate})
		case supervisor.Status:
			// The board first: whoever waits on noteStatus's bookkeeping
			// (an infra address, an arm) then finds the board up to date.
			l.emit(board.ProcStatus{Name: e.Name, At: e.At, Event: e.Event})
			l.noteStatus(e.Name, e.Event)
		case supervisor.Log:
			l.emit(board.ProcLog{Name: e.Name, At: e.At, Line: e.Line})
		case supervisor.Frozen:
			l.emit(board.ProcFrozen{Name: e.Name, PID: e.PID, At: e.At, Frozen: e.Frozen})
		}
	}
	close(l.out)
}

func (l *Lab) noteStatus(name string, ev status.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.notifyLocked()
	switch ev.Type {
	case status.Listening:
		if ev.Endpoint == "http" {
			l.httpAddrs[name] = httpEndpoint{addr: ev.Addr, pid: l.runPID[name]}
		}
		if ev.Endpoint != "http" {
			l.noteListenLocked(name, listenResult{addr: ev.Addr})
		}
	case status.CrashPointArmed:
		if pid := l.runPID[name]; l.arms[name].pid == pid {
			l.arms[name] = armNote{pid: pid, n: l.arms[name].n + 1}
		} else {
			l.arms[name] = armNote{pid: pid, n: 1}
		}
	}
}

func (l *Lab) httpAddr(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.httpAddrLocked(name)
}

func (l *Lab) httpAddrLocked(name string) string {
	ep := l.httpAddrs[name]
	// The pump learns of an exit a moment after the supervisor: an address
	// is only good while the incarnation that announced it still runs
	// (after a crash and a quick start, the old one is a dead port).
	if ep.addr == "" || ep.pid != l.sup.PID(name) {
		return ""
	}
	return ep.addr
}

// httpEndpoint is a process's HTTP address and the pid that announced it.
type httpEndpoint struct {
	addr string
	pid  int
}
