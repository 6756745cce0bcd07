package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Child is a role running as a child process of the test, in its own
// process group. Its stdout is parsed as status events; its stderr goes to
// a file whose tail is printed when the test fails.
type Child struct {
	t    testing.TB
	Name string
	Args []string
	cmd  *exec.Cmd

	stderrPath string

	mu      sync.Mutex
	events  []status.Event
	text    []string      // stdout lines that are not events
	changed chan struct{} // closed and replaced when something arrives or the process exits

	done     chan struct{} // closed after the process exited and stdout was drained
	exitCode int
	waitErr  error
}

// Start runs bin with args as a child process. It is killed (SIGKILL to its
// group) at the end of the test if it is still running.
func Start(t testing.TB, bin string, args ...string) *Child {
	t.Helper()
	return StartEnv(t, nil, bin, args...)
}

// StartEnv is Start with env added to the test's environment: unlike
// t.Setenv, it leaves the test free to run in parallel.
func StartEnv(t testing.TB, env []string, bin string, args ...string) *Child {
	t.Helper()
	c := &Child{t: t, Name: childName(args), Args: args, changed: make(chan struct{}), done: make(chan struct{})}
	f, err := os.CreateTemp(t.TempDir(), strings.ReplaceAll(c.Name, "/", "_")+"-*.stderr")
	if err != nil {
		t.Fatal(err)
	}
	c.stderrPath = f.Name()
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", c.Name, err)
	}
	f.Close() // the child has its own descriptor
	c.cmd = cmd
	go c.read(stdout)
	t.Cleanup(c.cleanup)
	return c
}

func childName(args []string) string {
	switch {
	case len(args) == 0:
		return "dashboard"
	case args[0] == "consumer" && len(args) > 1:
		return "consumer-" + args[1]
	}
	return args[0]
}

func (c *Child) read(stdout interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev, err := status.Parse(line)
		c.mu.Lock()
		if err == nil {
			c.events = append(c.events, ev)
		} else {
			c.text = append(c.text, string(line))
		}
		c.notifyLocked()
		c.mu.Unlock()
	}
	err := c.cmd.Wait()
	c.mu.Lock()
	c.waitErr = err
	c.exitCode = c.cmd.ProcessState.ExitCode()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c.exitCode = -int(ws.Signal())
	}
	c.notifyLocked()
	c.mu.Unlock()
	close(c.done)
}

func (c *Child) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// PID is the child's process id (and process group id).
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Events returns a copy of every event received so far.
func (c *Child) Events() []status.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]status.Event(nil), c.events...)
}

// Mark is the number of events received so far: pass it to WaitEventFrom
// to wait only for later events.
func (c *Child) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// Exited reports whether the process has exited, and its exit code
// (negative: killed by that signal).
func (c *Child) Exited() (bool, int) {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return true, c.exitCode
	default:
		return false, 0
	}
}

// WaitEvent waits for an event matching pred, looking at every event
// received since the start. It fails (returns an error) on timeout or when
// the process exits first.
func (c *Child) WaitEvent(pred func(status.Event) bool, timeout time.Duration) (status.Event, error) {
	return c.WaitEventFrom(0, pred, timeout)
}

// WaitEventFrom is WaitEvent for events after mark (see Mark).
func (c *Child) WaitEventFrom(mark int, pred func(status.Event) bool, timeout time.Duration) (status.Event, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := mark; i < len(c.events); i++ {
			if pred(c.events[i]) {
				ev := c.events[i]
				c.mu.Unlock()
				return ev, nil
			}
		}
		mark = max(mark, len(c.events))
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-c.done:
			// Events read before the exit are already in c.events: look once more.
			c.mu.Lock()
			for i := mark; i < len(c.events); i++ {
				if pred(c.events[i]) {
					ev := c.events[i]
					c.mu.Unlock()
					return ev, nil
				}
			}
			code := c.exitCode
			c.mu.Unlock()
			return status.Event{}, fmt.Errorf("%s exited (code %d) before the event", c.Name, code)
		case <-changed:
		case <-deadline.C:
			return status.Event{}, fmt.Errorf("%s: no such event within %s", c.Name, timeout)
		}
	}
}

// Await is WaitEvent that fails the test; call it from the test goroutine.
func (c *Child) Await(what string, pred func(status.Event) bool, timeout time.Duration) status.Event {
	c.t.Helper()
	ev, err := c.WaitEvent(pred, timeout)
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", what, err)
	}
	return ev
}

// AwaitFrom is WaitEventFrom that fails the test.
func (c *Child) AwaitFrom(mark int, what string, pred func(status.Event) bool, timeout time.Duration) status.Event {
	c.t.Helper()
	ev, err := c.WaitEventFrom(mark, pred, timeout)
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", what, err)
	}
	return ev
}

// Listening waits for the Listening event of endpoint ("http", "kafka",
// "mongo") and returns its address.
func (c *Child) Listening(endpoint string, timeout time.Duration) string {
	c.t.Helper()
	ev := c.Await(c.Name+" listening on "+endpoint, func(e status.Event) bool {
		return e.Type == status.Listening && e.Endpoint == endpoint
	}, timeout)
	return ev.Addr
}

// URL is "http://" + the child's HTTP address.
func (c *Child) URL(timeout time.Duration) string {
	c.t.Helper()
	return "http://" + c.Listening("http", timeout)
}

// Signal sends sig to the child's process group.
func (c *Child) Signal(sig syscall.Signal) {
	c.t.Helper()
	if err := syscall.Kill(-c.PID(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		c.t.Fatalf("signal %s to %s: %v", sig, c.Name, err)
	}
}

// Kill sends SIGKILL to the process group and waits for the exit: the
// crash the lab demonstrates.
func (c *Child) Kill() {
	c.t.Helper()
	_ = syscall.Kill(-c.PID(), syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s did not die within 10s of SIGKILL", c.Name)
	}
}

// Stop sends SIGTERM and waits up to 20 s for the exit; it returns the
// exit code and how long the exit took. A child that does not exit in time
// fails the test and is killed.
func (c *Child) Stop() (code int, took time.Duration) {
	c.t.Helper()
	start := time.Now()
	_ = syscall.Kill(-c.PID(), syscall.SIGTERM)
	code, ok := c.WaitExit(20 * time.Second)
	if !ok {
		c.Kill()
		c.t.Fatalf("%s did not exit within 20s of SIGTERM", c.Name)
	}
	return code, time.Since(start)
}

// WaitExit waits for the process to exit on its own.
func (c *Child) WaitExit(timeout time.Duration) (code int, exited bool) {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.exitCode, true
	case <-time.After(timeout):
		return 0, false
	}
}

// StderrTail returns the last n lines the child wrote to stderr.
func (c *Child) StderrTail(n int) string {
	b, err := os.ReadFile(c.stderrPath)
	if err != nil {
		return fmt.Sprintf("(stderr unreadable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (c *Child) cleanup() {
	select {
	case <-c.done:
	default:
		_ = syscall.Kill(-c.PID(), syscall.SIGKILL)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			c.t.Errorf("%s (pid %d) survived SIGKILL", c.Name, c.PID())
		}
	}
	if c.t.Failed() {
		c.mu.Lock()
		evs := c.events
		if len(evs) > 15 {
			evs = evs[len(evs)-15:]
		}
		var b strings.Builder
		for _, e := range evs {
			fmt.Fprintf(&b, "  %s %s %+v\n", e.Time.Format("15:04:05.000"), e.Type, compact(e))
		}
		text := c.text
		c.mu.Unlock()
		c.t.Logf("--- %s (pid %d, args %q): last events:\n%s--- stdout text lines: %d; stderr tail (%s):\n%s",
			c.Name, c.PID(), c.Args, b.String(), len(text), filepath.Base(c.stderrPath), c.StderrTail(40))
	}
}

// compact drops the fields every event has, for failure reports.
func compact(e status.Event) status.Event {
	e.Time, e.Role, e.Type = time.Time{}, "", ""
	return e
}

// Tail is the last n lines of s (a process's output, for a failure message).
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
