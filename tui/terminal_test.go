package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/e2e"
)

// TestNoTerminal: started without a terminal (stdin /dev/null, a session
// of its own, so /dev/tty cannot be opened either) the dashboard and serve
// say in one line that they need one and that --headless runs without,
// exit 1, and leave nothing behind in the temp dir (no run directory, no
// server directory).
func TestNoTerminal(t *testing.T) {
	bin := e2e.Binary(t)
	for _, args := range [][]string{nil, {"serve"}} {
		tmp := t.TempDir()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
			t.Errorf("%q: %v, want exit code 1", args, err)
		}
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "needs a terminal") || !strings.Contains(lines[0], "--headless") {
			t.Errorf("%q: stderr is not one line saying a terminal is needed and --headless runs without:\n%s", args, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: stdout: %s", args, stdout.String())
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("%q left %s behind in the temp dir", args, left[0].Name())
		}
	}
}
