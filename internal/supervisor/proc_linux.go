package supervisor

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// childAttr puts the child in its own process group (so signals reach its
// descendants too) and has the kernel SIGKILL it when the supervisor dies,
// however it dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until pid has ended without reaping it. While the
// zombie exists its pid, and so its process-group id, cannot be reused,
// which makes signalling the group race-free until the reap. It reports
// false if it could not wait (the caller then reaps first).
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil
	}
}
