package supervisor

import (
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Event is what the supervisor reports about its children: one of Started,
// Exited, Frozen, Status or Log. Use a type switch.
type Event interface{ isEvent() }

// Started: a child process is running.
type Started struct {
	Name string
	PID  int
	At   time.Time
}

// Exited: a child process ended and has been reaped; whatever was left of its
// process group has been SIGKILLed.
type Exited struct {
	Name string
	PID  int
	At   time.Time
	// ExitCode is the process's exit status, or -1 when a signal killed it.
	ExitCode int
	// Signal is the name of the signal that killed it ("SIGKILL",
	// "SIGTERM", ...), "" when it exited by itself.
	Signal string
	// Deliberate is true when the exit followed Stop, Restart, Shutdown or
	// KillAll. Crash and a child killing itself at a crash point are not
	// deliberate: they are the failures the dashboard wants to show.
	Deliberate bool
	// Err is set when waiting for the process failed (not for a non-zero
	// exit, which ExitCode and Signal describe).
	Err error
}

// Frozen: Freeze SIGSTOPped a child's process group (Frozen true), or Thaw
// or a Stop SIGCONTed it (Frozen false). An Exited ends a freeze too.
type Frozen struct {
	Name   string
	PID    int
	At     time.Time
	Frozen bool
}

// Status: one stdout line that status.Parse accepted.
type Status struct {
	Name  string
	At    time.Time
	Event status.Event
}

// Log: one stderr line, or one stdout line that is not a status event.
type Log struct {
	Name   string
	At     time.Time
	Line   string
	Stream string // "stdout" or "stderr"
}

func (Started) isEvent() {}
func (Exited) isEvent()  {}
func (Status) isEvent()  {}
func (Log) isEvent()     {}
func (Frozen) isEvent()  {}

const (
	// eventBuffer is the capacity of the channel Events returns.
	eventBuffer = 1024
	// maxQueuedLogs bounds how many Log events wait behind a slow reader;
	// beyond it new Log events are dropped (they are still in the log file
	// and in Tail). Started, Exited and Status events are never dropped
	// while the supervisor runs.
	maxQueuedLogs = 10000
)

// eventQueue decouples the goroutines that read children's pipes from the
// reader of Events: pushing never blocks, so a slow dashboard cannot stall a
// child writing to its stdout.
type eventQueue struct {
	out      chan Event
	wake     chan struct{}
	stop     chan struct{}
	finished chan struct{}

	mu      sync.Mutex
	q       []Event
	logs    int // Log events in q
	dropped uint64
	closed  bool
}

func newEventQueue() *eventQueue {
	e := &eventQueue{
		out:      make(chan Event, eventBuffer),
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	go e.loop()
	return e
}

func (e *eventQueue) push(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		e.dropped++
		return
	}
	if _, isLog := ev.(Log); isLog {
		if e.logs >= maxQueuedLogs {
			e.dropped++
			return
		}
		e.logs++
	}
	e.q = append(e.q, ev)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *eventQueue) loop() {
	defer close(e.finished)
	for {
		e.mu.Lock()
		if len(e.q) == 0 {
			e.mu.Unlock()
			select {
			case <-e.wake:
				continue
			case <-e.stop:
				e.flush()
				return
			}
		}
		ev := e.q[0] // only this goroutine removes from q, so q[0] stays put
		e.mu.Unlock()
		select {
		case e.out <- ev:
			e.mu.Lock()
			e.q[0] = nil
			e.q = e.q[1:]
			if _, isLog := ev.(Log); isLog {
				e.logs--
			}
			e.mu.Unlock()
		case <-e.stop:
			e.flush()
			return
		}
	}
}

// flush hands what is still pending to the buffered channel without
// blocking and closes it. If it does not all fit, Log events go first, so a
// reader that comes late still sees every Exited.
func (e *eventQueue) flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	var pending []Event
drain:
	for {
		select {
		case ev := <-e.out:
			pending = append(pending, ev)
		default:
			break drain
		}
	}
	pending = append(pending, e.q...)
	e.q = nil
	e.logs = 0
	if over := len(pending) - cap(e.out); over > 0 {
		kept := pending[:0:0]
		essential := 0
		for _, ev := range pending {
			if _, isLog := ev.(Log); !isLog {
				essential++
			}
		}
		logRoom := max(cap(e.out)-essential, 0)
		// Keep the newest logs that fit and every essential event, newest
		// first when even those do not fit.
		logsSeen, logsTotal := 0, len(pending)-essential
		essSeen := 0
		for _, ev := range pending {
			if _, isLog := ev.(Log); isLog {
				logsSeen++
				if logsTotal-logsSeen < logRoom {
					kept = append(kept, ev)
				}
				continue
			}
			essSeen++
			if essential-essSeen < cap(e.out) {
				kept = append(kept, ev)
			}
		}
		e.dropped += uint64(len(pending) - len(kept))
		pending = kept
	}
	for _, ev := range pending {
		e.out <- ev // fits: len(pending) <= cap and the channel was drained
	}
	close(e.out)
}

// close stops the dispatcher after a final flush and waits for it.
func (e *eventQueue) close() {
	close(e.stop)
	<-e.finished
}

func (e *eventQueue) droppedCount() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dropped
}
