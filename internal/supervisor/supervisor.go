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
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kafka-recovery-lab/krl/internal/status"
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
	// Args are the arguments after Exe, e.g. {"consumer", "usage", "--mode", "naive"}.
	Args []string
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

// Freeze SIGSTOPs the process group of name: the hung-process case. It
// stays frozen until Thaw, and is reported as a Frozen event. Freezing a
// frozen process does nothing.
func (s *Supervisor) Freeze(name string) error { return s.setFrozen(name, true) }

// Thaw SIGCONTs the process group of name after Freeze (a Frozen event with
// Frozen false). Thawing a process that is not frozen does nothing.
func (s *Supervisor) Thaw(name string) error { return s.setFrozen(name, false) }

// Frozen reports whether name is running and frozen.
func (s *Supervisor) Frozen(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.procs[name]
	return ok && p.cur != nil && p.cur.frozen.Load()
}

func (s *Supervisor) setFrozen(name string, freeze bool) error {
	return s.withRunning(name, func(p *proc, r *run) error {
		if !freeze {
			if err := s.thawRun(r); err != nil {
				return fmt.Errorf("supervisor: thaw %s: %w", name, err)
			}
			return nil
		}
		if r.frozen.Load() {
			return nil
		}
		if err := r.signal(syscall.SIGSTOP); err != nil {
			return fmt.Errorf("supervisor: freeze %s: %w", name, err)
		}
		r.frozen.Store(true)
		s.mu.Lock()
		if p.cur == r {
			s.events.push(Frozen{Name: r.name, PID: r.pid, At: time.Now(), Frozen: true})
		}
		s.mu.Unlock()
		p.logLine(r, fmt.Sprintf("=== %s frozen pid %d (SIGSTOP) ===", stamp(time.Now()), r.pid))
		return nil
	})
}

// thawRun SIGCONTs the run's group. It always signals (a group member
// stopped some other way is continued too) and reports a thaw only when
// Freeze had frozen it.
func (s *Supervisor) thawRun(r *run) error {
	if err := r.signal(syscall.SIGCONT); err != nil {
		return err
	}
	if !r.frozen.Swap(false) {
		return nil
	}
	s.mu.Lock()
	s.events.push(Frozen{Name: r.name, PID: r.pid, At: time.Now(), Frozen: false})
	p := s.procs[r.name]
	s.mu.Unlock()
	if p != nil {
		p.logLine(r, fmt.Sprintf("=== %s thawed pid %d (SIGCONT) ===", stamp(time.Now()), r.pid))
	}
	return nil
}

// KillAll SIGKILLs the process group of every running child and returns at
// once, without waiting. It is meant for paths that are about to exit and
// cannot afford an orderly Shutdown: a second Ctrl-C, a fatal signal
// handler, a panic handler. It takes only a short internal lock, never waits
// on a child, and is safe to call at any time and more than once. The exits
// are reported (Deliberate true) if the process lives long enough.
func (s *Supervisor) KillAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if r := p.cur; r != nil {
			r.deliberate.Store(true)
			_ = r.signal(syscall.SIGKILL)
		}
	}
}

// Shutdown stops every running child in reverse dependency order (highest
// Tier first, each tier concurrently, as Stop does), then closes the Events
// channel. If ctx ends first, what is still running is SIGKILLed at once
// and ctx's error is returned. After Shutdown, Start fails with ErrClosed.
// Calling it again returns the first call's result.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdown(ctx) })
	return s.shutdownErr
}

func (s *Supervisor) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	tiers := map[int][]*proc{}
	for _, p := range s.procs {
		tiers[p.spec.Tier] = append(tiers[p.spec.Tier], p)
	}
	s.mu.Unlock()

	order := make([]int, 0, len(tiers))
	for t := range tiers {
		order = append(order, t)
	}
	slices.Sort(order)
	slices.Reverse(order)
	for _, t := range order {
		var wg sync.WaitGroup
		for _, p := range tiers[t] {
			wg.Go(func() {
				// ctl waits for a Start or Stop in progress, so nothing
				// started concurrently is missed.
				p.ctl.Lock()
				defer p.ctl.Unlock()
				_ = s.stop(ctx, p)
			})
		}
		wg.Wait()
	}

	s.mu.Lock()
	wd := s.wd
	s.wd = nil
	s.mu.Unlock()
	wd.close()
	s.events.close()
	return ctx.Err()
}

// stop is Stop with ctx cutting the grace period short. Caller holds p.ctl.
func (s *Supervisor) stop(ctx context.Context, p *proc) error {
	s.mu.Lock()
	r, name := p.cur, p.spec.Name
	s.mu.Unlock()
	if r == nil {
		return fmt.Errorf("%w: %s", ErrNotRunning, name)
	}
	r.deliberate.Store(true)
	if err := r.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("supervisor: stop %s: %w", r.name, err)
	}
	// A frozen group keeps the SIGTERM pending until it is continued; the
	// SIGCONT comes after it so the first thing it does is handle it.
	if err := s.thawRun(r); err != nil {
		return fmt.Errorf("supervisor: stop %s: %w", r.name, err)
	}
	grace := time.NewTimer(s.cfg.StopTimeout)
	defer grace.Stop()
	select {
	case <-r.done:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	if err := r.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("supervisor: stop %s: %w", r.name, err)
	}
	<-r.done
	return nil
}

func (s *Supervisor) exe() (string, error) {
	if s.cfg.Exe != "" {
		return s.cfg.Exe, nil
	}
	return os.Executable()
}

// ensureWatchdog starts the watchdog on first use. Without /bin/sh the
// children still die with the supervisor (Pdeathsig); only their own
// children could survive.
func (s *Supervisor) ensureWatchdog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wdStarted || s.cfg.noWatchdog {
		return
	}
	s.wdStarted = true
	wd, err := startWatchdog()
	if err != nil {
		s.events.push(Log{Name: "supervisor", At: time.Now(), Line: err.Error(), Stream: "stderr"})
		return
	}
	s.wd = wd
}

func (s *Supervisor) openLog(name string) (*os.File, error) {
	if s.cfg.RunDir == "" {
		return nil, nil
	}
	dir := filepath.Join(s.cfg.RunDir, "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// logLine appends one line to the run's log file and to the tail.
func (p *proc) logLine(r *run, line string) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	p.tail.add(line)
	if r != nil && r.log != nil {
		_, _ = r.log.WriteString(line + "\n")
	}
}

// start forks the process. Caller holds p.ctl.
func (s *Supervisor) start(p *proc) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if r := p.cur; r != nil {
		s.mu.Unlock()
		return fmt.Errorf("%w: %s (pid %d)", ErrRunning, r.name, r.pid)
	}
	spec := p.spec
	s.mu.Unlock()

	fail := func(err error) error {
		err = fmt.Errorf("supervisor: start %s: %w", spec.Name, err)
		p.logLine(nil, "=== "+err.Error()+" ===")
		return err
	}
	exe, err := s.exe()
	if err != nil {
		return fail(err)
	}
	logFile, err := s.openLog(spec.Name)
	if err != nil {
		return fail(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeIfOpen(logFile)
		return fail(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeIfOpen(logFile, outR, outW)
		return fail(err)
	}
	s.ensureWatchdog()

	cmd := exec.Command(exe, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout = outW
	cmd.Stderr = errW
	cmd.SysProcAttr = childAttr()
	err = spawn(cmd)
	outW.Close() // the child has its own copies; EOF comes when it and its group are gone
	errW.Close()
	if err != nil {
		closeIfOpen(outR, errR)
		if logFile != nil {
			_, _ = fmt.Fprintf(logFile, "=== %s start failed: %v ===\n", stamp(time.Now()), err)
			logFile.Close()
		}
		return fail(err)
	}

	r := &run{name: spec.Name, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	now := time.Now()
	p.logMu.Lock()
	r.log = logFile
	p.logMu.Unlock()
	p.logLine(r, fmt.Sprintf("=== %s started pid %d: %s ===", stamp(now), r.pid, strings.Join(spec.Args, " ")))

	s.mu.Lock()
	p.cur = r
	s.events.push(Started{Name: r.name, PID: r.pid, At: now})
	wd := s.wd
	s.mu.Unlock()
	wd.add(r.pid)

	var readers sync.WaitGroup
	readers.Go(func() { s.readStdout(p, r, outR) })
	readers.Go(func() { s.readStderr(p, r, errR) })
	go s.await(p, r, wd, &readers, outR, errR)
	return nil
}

func (s *Supervisor) readStdout(p *proc, r *run, f *os.File) {
	defer f.Close()
	readLines(f, func(line []byte) {
		if len(line) > 0 && line[0] == '{' {
			if ev, err := status.Parse(line); err == nil {
				s.events.push(Status{Name: r.name, At: time.Now(), Event: ev})
				return
			}
		}
		text := string(line)
		p.logLine(r, text)
		s.events.push(Log{Name: r.name, At: time.Now(), Line: text, Stream: "stdout"})
	})
}

func (s *Supervisor) readStderr(p *proc, r *run, f *os.File) {
	defer f.Close()
	readLines(f, func(line []byte) {
		text := string(line)
		p.logLine(r, text)
		s.events.push(Log{Name: r.name, At: time.Now(), Line: text, Stream: "stderr"})
	})
}

// await waits for the run to end, cleans up its group, drains its output and
// reports Exited.
func (s *Supervisor) await(p *proc, r *run, wd *watchdog, readers *sync.WaitGroup, outR, errR *os.File) {
	zombie := waitExited(r.pid)
	if zombie {
		// The leader is dead but not reaped, so the group id is still ours:
		// kill what is left of the group, then reap.
		_ = r.signal(syscall.SIGKILL)
		r.markReaped()
	}
	waitErr := r.cmd.Wait()
	if !zombie {
		_ = r.signal(syscall.SIGKILL)
		r.markReaped()
	}

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	grace := time.NewTimer(s.cfg.drainTimeout)
	select {
	case <-drained:
	case <-grace.C:
		// Someone outside the group still holds the pipes: stop reading.
		outR.Close()
		errR.Close()
		<-drained
	}
	grace.Stop()

	ex := Exited{Name: r.name, PID: r.pid, At: time.Now(), ExitCode: -1, Deliberate: r.deliberate.Load()}
	if st := r.cmd.ProcessState; st != nil {
		ex.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ex.Signal = signalName(ws.Signal())
		}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		ex.Err = waitErr
	}
	p.logLine(r, "=== "+describeExit(ex)+" ===")
	p.logMu.Lock()
	closeIfOpen(r.log)
	r.log = nil
	p.logMu.Unlock()

	s.mu.Lock()
	p.cur = nil
	s.events.push(ex)
	s.mu.Unlock()
	wd.del(r.pid)
	close(r.done)
}

func describeExit(ex Exited) string {
	var how string
	switch {
	case ex.Err != nil:
		how = "wait failed: " + ex.Err.Error()
	case ex.Signal != "":
		how = "killed by " + ex.Signal
	default:
		how = fmt.Sprintf("exit code %d", ex.ExitCode)
	}
	kind := "crashed"
	if ex.Deliberate {
		kind = "stopped"
	} else if ex.Signal == "" && ex.ExitCode == 0 && ex.Err == nil {
		kind = "exited"
	}
	return fmt.Sprintf("%s %s pid %d: %s", stamp(ex.At), kind, ex.PID, how)
}

func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return sig.String()
}

func stamp(t time.Time) string { return t.Format("2006-01-02 15:04:05.000") }

func closeIfOpen(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
