// Package e2e is the end-to-end test harness: it builds the one binary,
// runs every role as a real child process (its own process group, status
// events parsed from stdout, stderr kept for failure reports), provides the
// infrastructure of a test (embedded broker and store, or a real Kafka /
// MongoDB named by KAFKA_BROKER / MONGO_URI) and an independent reader of
// the topic that computes the truth the consumers are compared with.
//
// The files are regular Go files so that tests of other packages (the
// dashboard's) can import the harness.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binDirPrefix names the per-process build directory in os.TempDir().
const binDirPrefix = "krl-e2e-bin-"

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary builds ./tui once per test process and returns the path of the
// executable. A failed build fails every test that asks for it.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		start := time.Now()
		build.path, build.err = buildBinary()
		if build.err == nil {
			t.Logf("built %s in %s", build.path, time.Since(start).Round(time.Millisecond))
		}
	})
	if build.err != nil {
		t.Fatalf("build ./tui: %v", build.err)
	}
	return build.path
}

func buildBinary() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	removeStaleBinaries()
	dir := filepath.Join(os.TempDir(), binDirPrefix+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		if goroot := os.Getenv("GOROOT"); goroot != "" {
			goTool = filepath.Join(goroot, "bin", "go")
		} else {
			return "", fmt.Errorf("go tool not found: %w", err)
		}
	}
	out := filepath.Join(dir, "krl")
	cmd := exec.Command(goTool, "build", "-o", out, "./tui")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
}

// ModuleRoot finds the directory holding go.mod, from the current
// directory upwards (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/kafka-recovery-lab/krl") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod of github.com/kafka-recovery-lab/krl not found above the current directory")
		}
		dir = parent
	}
}

// RemoveBinary deletes this process's build; call it from TestMain after
// m.Run. Builds of processes that died without it are removed by the next
// build.
func RemoveBinary() {
	_ = os.RemoveAll(filepath.Join(os.TempDir(), binDirPrefix+strconv.Itoa(os.Getpid())))
}

func removeStaleBinaries() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), binDirPrefix+"*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), binDirPrefix))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}
