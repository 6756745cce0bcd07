// Package supervisor starts, crashes, stops and restarts the dashboard's child
// processes (the roles of this same binary), in the manner of goreman and
// overmind, and reports what they do as Events.
//
// Guarantees:
//   - Each child runs in its own process group; every signal goes to the
//     group, so anything the child forked gets it too.
//   - When a child's main process ends, for whatever reason, the rest of its
//     group is SIGKILLed before it is reported Exited.
//   - Children never outlive the supervisor: on Linux the kernel SIGKILLs each
//     child when the supervisor process dies (parent-death signal), and a
//     watchdog shell SIGKILLs the rest of their groups. Shutdown stops them
//     in order; KillAll is the last resort for signal handlers.
//   - Freeze SIGSTOPs a child's group and Thaw SIGCONTs it. A frozen child
//     can still be stopped (Stop sends SIGCONT after its SIGTERM), crashed,
//     restarted and shut down; every life of a process starts thawed.
//
// A process that leaves its group (setsid, setpgid) escapes all of this.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Errors returned by the control methods; test with errors.Is.
var (
	ErrUnknown    = errors.New("supervisor: unknown process")
	ErrRunning    = errors.New("supervisor: already running")
	ErrNotRunning = errors.New("supervisor: not running")
	ErrClosed     = errors.New("supervisor: shut down")
	ErrBadName    = errors.New("supervisor: bad process name")
)

// Defaults for zero Config fields.
const (
	DefaultStopTimeout = 5 * time.Second
	DefaultTailLines   = 500
	// drainTimeout bounds how long output is read after a child ends: a
	// descendant that left the group could hold the pipes open forever.
	defaultDrainTimeout = 2 * time.Second
)

// Config configures a Supervisor.
type Config struct {
	// Exe is the binary every child runs; "" means this process's own
	// executable (the roles are subcommands of the same binary).
	Exe string
	// RunDir holds RunDir/logs/<name>.log, one per process, appended across
	// restarts. "" means no log files (Tail still works).
	RunDir string
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	// 0 means DefaultStopTimeout.
	StopTimeout time.Duration
	// TailLines is how many log lines per process Tail keeps in memory.
	// 0 means DefaultTailLines.
	TailLines int

	// noWatchdog disables the watchdog shell (tests of the kernel-only path).
	noWatchdog bool
	// drainTimeout overrides defaultDrainTimeout (tests).
	drainTimeout time.Duration
}

// Spec describes one child process.
type Spec struct {
	// Name identifies the process: letters, digits, '.', '_' and '-'. It
	// names the log file too.
	Name string
	// Program is the executable to run instead of Config.Exe: a path, or
	// a name looked up in PATH (a command the user gave, run as a role).
	Program string
	// Args are the arguments after Exe, e.g. {"consumer", "usage", "--mode", "naive"}.
	Args []string
	// PlainStdout: every stdout line is a log line. A program that is not
	// one of our roles speaks no status protocol, and none of its lines
	// may be taken for one.
	PlainStdout bool
	// Env entries ("K=V") are added to the supervisor's own environment.
	Env []string
	// Tier orders Shutdown: higher tiers are stopped first, all processes
	// of one tier concurrently. Use 0 for what others depend on (broker,
	// store) and 1 for the producer and the consumers.
	Tier int
}

// Supervisor runs a set of named child processes. It is safe for concurrent
// use. Create it with New; end it with Shutdown.
type Supervisor struct {
	cfg    Config
	events *eventQueue

	mu        sync.Mutex
	procs     map[string]*proc
	closed    bool
	wd        *watchdog
	wdStarted bool

	shutdownOnce sync.Once
	shutdownErr  error
}

type proc struct {
	// ctl serialises Start, Stop, Crash and Restart of this process, so a
	// Restart is never interleaved with another command.
	ctl sync.Mutex

	// Guarded by Supervisor.mu.
	spec Spec
	cur  *run

	logMu sync.Mutex
	tail  *ring // guarded by logMu
}

// run is one life of a process, from fork to reap.
type run struct {
	name       string
	pid        int
	cmd        *exec.Cmd
	deliberate atomic.Bool
	done       chan struct{} // closed once Exited has been queued
	frozen     atomic.Bool   // SIGSTOPped by Freeze, not yet thawed

	sigMu  sync.Mutex
	reaped bool // set just before the reap: the pid may be reused after it

	log *os.File // guarded by proc.logMu; nil without RunDir
}

// signal sends sig to the run's process group unless the leader has been
// reaped (its pid, hence the group id, could then belong to someone else).
func (r *run) signal(sig syscall.Signal) error {
	r.sigMu.Lock()
	defer r.sigMu.Unlock()
	if r.reaped {
		return nil
	}
	err := syscall.Kill(-r.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone; the waiter reports it
	}
	return err
}

func (r *run) markReaped() {
	r.sigMu.Lock()
	r.reaped = true
	r.sigMu.Unlock()
}

// New returns a Supervisor with no processes defined.
func New(cfg Config) *Supervisor {
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.TailLines <= 0 {
		cfg.TailLines = DefaultTailLines
	}
	if cfg.drainTimeout <= 0 {
		cfg.drainTimeout = defaultDrainTimeout
	}
	return &Supervisor{cfg: cfg, events: newEventQueue(), procs: map[string]*proc{}}
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// Define adds a process, or replaces the spec of an existing one; a running
// process keeps running and uses the new spec from its next start.
func (s *Supervisor) Define(spec Spec) error {
	if !validName.MatchString(spec.Name) {
		return fmt.Errorf("%w: %q", ErrBadName, spec.Name)
	}
	spec.Args = slices.Clone(spec.Args)
	spec.Env = slices.Clone(spec.Env)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.procs[spec.Name]; ok {
		p.spec = spec
		return nil
	}
	s.procs[spec.Name] = &proc{spec: spec, tail: newRing(s.cfg.TailLines)}
	return nil
}

// SetArgs changes the arguments used from the next start of name (a mode
// switch is SetArgs followed by Restart).
func (s *Supervisor) SetArgs(name string, args []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.procs[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknown, name)
	}
	p.spec.Args = slices.Clone(args)
	return nil
}

// Events returns the channel of events of every process, in order per
// process (Started, then its Status and Log events, then Exited). The same
// channel is returned every time; it is closed by Shutdown.
//
// Reading slowly never blocks the supervisor or the children: events wait in
// an unbounded queue, except Log events, of which at most 10,000 wait; more
// are dropped (they remain in the log file and in Tail) and counted by
// Dropped. At Shutdown whatever is still queued is put in the channel's
// buffer (1024), dropping Log events first if it does not fit.
func (s *Supervisor) Events() <-chan Event { return s.events.out }

// Dropped is how many events were dropped because the reader of Events fell
// behind, or was gone at Shutdown.
func (s *Supervisor) Dropped() uint64 { return s.events.droppedCount() }

func (s *Supervisor) lookup(name string) (*proc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.procs[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknown, name)
	}
	return p, nil
}

func (s *Supervisor) current(p *proc) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.cur
}

// PID returns the process id (and process-group id) of name, 0 when it is
// not running or unknown.
func (s *Supervisor) PID(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.procs[name]; ok && p.cur != nil {
		return p.cur.pid
	}
	return 0
}

// Running reports whether name is running: started and not yet reported
// Exited.
func (s *Supervisor) Running(name string) bool { return s.PID(name) != 0 }

// Tail returns up to n of the newest log lines of name, oldest first: its
// stderr, its non-event stdout, and a line for each start and exit. nil for
// an unknown name.
func (s *Supervisor) Tail(name string, n int) []string {
	p, err := s.lookup(name)
	if err != nil {
		return nil
	}
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return p.tail.last(n)
}

// Start starts name. It fails with ErrRunning if it is running.
func (s *Supervisor) Start(name string) error {
	p, err := s.lookup(name)
	if err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	return s.start(p)
}

// Crash SIGKILLs the process group of name, as a real crash would, and
// returns once the exit has been reported (Exited, Deliberate false).
func (s *Supervisor) Crash(name string) error {
	return s.withRunning(name, func(_ *proc, r *run) error {
		if err := r.signal(syscall.SIGKILL); err != nil {
			return fmt.Errorf("supervisor: crash %s: %w", name, err)
		}
		<-r.done
		return nil
	})
}

// withRunning calls f with name's process and its current run, holding the
// process's control lock; ErrNotRunning when it has none.
func (s *Supervisor) withRunning(name string, f func(p *proc, r *run) error) error {
	p, err := s.lookup(name)
	if err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	r := s.current(p)
	if r == nil {
		return fmt.Errorf("%w: %s", ErrNotRunning, name)
	}
	return f(p, r)
}

// Stop sends SIGTERM to the process group of name, SIGKILL after
// StopTimeout if it is still running, and returns once the exit has been
// reported (Exited, Deliberate true).
func (s *Supervisor) Stop(name string) error {
	p, err := s.lookup(name)
	if err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	return s.stop(context.Background(), p)
}

// Restart stops name if it is running (as Stop does) and starts it again
// with its current spec.
func (s *Supervisor) Restart(name string) error {
	p, err := s.lookup(name)
	if err != nil {
		return err
	}
	p.ctl.Lock()
	defer p.ctl.Unlock()
	if err := s.stop(context.Background(), p); err != nil && !errors.Is(err, ErrNotRunning) {
		return err
	}
	return s.start(p)
}

// Signal sends sig to the process group of name (SIGUSR1 / SIGUSR2 pause and
// resume the producer). It does not mark the exit deliberate.
func (s *Supervisor) Signal(name string, sig syscall.Signal) error {
	p, err := s.lookup(name)
	if err != nil {
		return err
	}
	r := s.current(p)
	if r == nil {
		return fmt.Errorf("%w: %s", ErrNotRunning, name)
	}
	if err := r.signal(sig); err != nil {
		return fmt.Errorf("supervisor: signal %s: %w", name, err)
	}
	return nil
}
