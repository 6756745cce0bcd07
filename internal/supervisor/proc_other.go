//go:build unix && !linux

package supervisor

import "syscall"

// childAttr puts the child in its own process group. There is no
// parent-death signal outside Linux: children rely on Shutdown, KillAll and
// the watchdog.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExited cannot wait without reaping here; the caller reaps first and
// signals the leftover group afterwards.
func waitExited(pid int) bool { return false }
