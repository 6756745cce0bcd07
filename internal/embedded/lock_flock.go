//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes a non-blocking exclusive flock on dir/krl.lock. The kernel
// drops it when the process dies, so a SIGKILLed role never leaves a stale
// lock behind. The file holds the owner's PID for the error message.
func lockDir(dir string) (func(), error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner := "another process"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid := strings.TrimSpace(string(b)); pid != "" {
					owner = "process " + pid
				}
			}
			return nil, fmt.Errorf("data dir %s is in use by %s", dir, owner)
		}
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
