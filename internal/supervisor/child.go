package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"golang.org/x/sys/unix"
)

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
	if spec.Program != "" {
		exe, err = exec.LookPath(spec.Program)
	}
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
	if spec.Program != "" {
		cmd.Args[0] = spec.Program
	}
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
	shown := spec.Args
	if spec.Program != "" {
		shown = cmd.Args
	}
	p.logLine(r, fmt.Sprintf("=== %s started pid %d: %s ===", stamp(now), r.pid, strings.Join(shown, " ")))

	s.mu.Lock()
	p.cur = r
	s.events.push(Started{Name: r.name, PID: r.pid, At: now})
	wd := s.wd
	s.mu.Unlock()
	wd.add(r.pid)

	var readers sync.WaitGroup
	readers.Go(func() { s.readStdout(p, r, outR, spec.PlainStdout) })
	readers.Go(func() { s.readStderr(p, r, errR) })
	go s.await(p, r, wd, &readers, outR, errR)
	return nil
}

func (s *Supervisor) readStdout(p *proc, r *run, f *os.File, plain bool) {
	defer f.Close()
	readLines(f, func(line []byte) {
		if !plain && len(line) > 0 && line[0] == '{' {
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
