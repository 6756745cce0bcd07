//go:build linux

package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// The test binary doubles as every child the tests supervise: when fakeEnv
// is set, TestMain runs that fake role instead of the tests.
const (
	fakeEnv     = "KRL_SUPERVISOR_FAKE"
	fakeCodeEnv = "KRL_SUPERVISOR_FAKE_CODE"
	fakeLines   = "KRL_SUPERVISOR_FAKE_LINES"
	helperNoWD  = "KRL_SUPERVISOR_HELPER_NO_WATCHDOG"
	// helperFreeze: the helper supervisor freezes its children before it
	// reports them.
	helperFreeze = "KRL_SUPERVISOR_HELPER_FREEZE"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(fakeEnv); role != "" {
		os.Exit(runFake(role, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeEnvFor(role string) []string { return []string{fakeEnv + "=" + role} }

// idle blocks forever without looking like a deadlock to the runtime.
func idle() {
	for {
		time.Sleep(time.Hour)
	}
}

// spawnGrandchild starts a "sleep" fake that ignores SIGTERM, in the
// caller's process group unless attr says otherwise. It shares the caller's
// stderr, so it holds the supervisor's pipe as a real descendant would. It
// returns once the grandchild has installed its signal dispositions.
func spawnGrandchild(attr *syscall.SysProcAttr) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeEnv+"=sleep")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = attr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err == nil {
		var ready string
		_, err = fmt.Fscanln(out, &ready) // "ready" once SIGTERM is ignored
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grandchild:", err)
		os.Exit(1)
	}
	return cmd.Process.Pid
}

func runFake(role string, args []string) int {
	em := status.New("fake")
	switch role {
	case "events":
		// Prints a bit of everything, answers SIGUSR1/SIGUSR2, exits 0 on SIGTERM.
		sigs := make(chan os.Signal, 4)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2)
		fmt.Println("hello stdout")
		fmt.Println("args: " + strings.Join(args, " "))
		fmt.Fprintln(os.Stderr, "hello stderr")
		em.Emit(status.Event{Type: status.Started, PID: os.Getpid()})
		for sig := range sigs {
			switch sig {
			case syscall.SIGUSR1:
				em.Emit(status.Event{Type: status.Paused})
			case syscall.SIGUSR2:
				em.Emit(status.Event{Type: status.Resumed})
			case syscall.SIGTERM:
				em.Emit(status.Event{Type: status.Stopping, Reason: "SIGTERM"})
				fmt.Fprintln(os.Stderr, "bye")
				return 0
			}
		}
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		em.Emit(status.Event{Type: status.Started, PID: os.Getpid()})
		idle()
	case "grandchild":
		// Forks a grandchild that ignores SIGTERM, then behaves like "events"
		// about SIGTERM: only a group SIGKILL can take the grandchild down.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		fmt.Printf("grandchild=%d\n", spawnGrandchild(nil))
		em.Emit(status.Event{Type: status.Started, PID: os.Getpid()})
		<-sigs
		return 0
	case "escape":
		// Forks a grandchild that leaves the group (setsid) but keeps the
		// pipes, then exits.
		fmt.Printf("grandchild=%d\n", spawnGrandchild(&syscall.SysProcAttr{Setsid: true}))
		return 0
	case "exit":
		code, _ := strconv.Atoi(os.Getenv(fakeCodeEnv))
		fmt.Fprintf(os.Stderr, "exiting with %d\n", code)
		return code
	case "crash-point":
		em.Emit(status.Event{Type: status.CrashPoint, Point: "after-delta", Partition: 1, Offset: 42})
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		idle()
	case "spam":
		// The status line goes first: once the last stderr line is seen,
		// it is surely in the pipe.
		em.Emit(status.Event{Type: status.Started, PID: os.Getpid()})
		n, _ := strconv.Atoi(os.Getenv(fakeLines))
		for i := range n {
			fmt.Fprintf(os.Stderr, "line %d\n", i)
		}
		idle()
	case "sleep":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
		fmt.Println("ready")
		idle()
	case "supervisor":
		return runHelperSupervisor()
	}
	fmt.Fprintln(os.Stderr, "unknown fake role", role)
	return 3
}

// helperReport is what the helper supervisor prints once its children and
// grandchildren are all up.
type helperReport struct {
	Children      []int `json:"children"`
	Grandchildren []int `json:"grandchildren"`
}

// runHelperSupervisor runs a Supervisor with three "grandchild" children,
// each started from a goroutine whose OS thread then exits (the Pdeathsig
// gotcha), reports every pid on stdout and blocks until the test kills it.
func runHelperSupervisor() int {
	sup := New(Config{RunDir: os.Getenv("KRL_SUPERVISOR_HELPER_RUNDIR"), noWatchdog: os.Getenv(helperNoWD) != ""})
	defer sup.KillAll() // only reached on failure: leave nothing behind
	names := []string{"c1", "c2", "c3"}
	for _, n := range names {
		if err := sup.Define(Spec{Name: n, Env: fakeEnvFor("grandchild")}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := startFromExitingThread(sup, n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	var rep helperReport
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(rep.Children) < len(names) || len(rep.Grandchildren) < len(names) {
		select {
		case ev := <-sup.Events():
			switch ev := ev.(type) {
			case Started:
				rep.Children = append(rep.Children, ev.PID)
			case Log:
				if pid, ok := strings.CutPrefix(ev.Line, "grandchild="); ok {
					n, _ := strconv.Atoi(pid)
					rep.Grandchildren = append(rep.Grandchildren, n)
				}
			case Exited:
				fmt.Fprintf(os.Stderr, "child exited early: %+v\n", ev)
				return 1
			}
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "helper: children did not come up")
			return 1
		}
	}
	if os.Getenv(helperFreeze) != "" {
		for _, n := range names {
			if err := sup.Freeze(n); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test kills us
	return 0
}

// startFromExitingThread calls Start on a goroutine locked to a thread that
// exits when it returns. The main thread is skipped: the runtime parks it
// for good instead of exiting it.
func startFromExitingThread(sup *Supervisor, name string) error {
	for {
		errc := make(chan error, 1)
		onMain := make(chan bool, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			if syscall.Gettid() == os.Getpid() {
				onMain <- true
				return
			}
			onMain <- false
			errc <- sup.Start(name)
		}()
		if !<-onMain {
			return <-errc
		}
	}
}
