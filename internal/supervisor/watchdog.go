package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// The parent-death signal kills the children but not their descendants:
// Pdeathsig is not inherited across fork. The watchdog covers the rest of
// each child's process group when the supervisor dies without cleaning up
// (SIGKILL, a crash): a tiny shell in its own process group that reads
// "add PGID" / "del PGID" lines on a pipe from the supervisor and, when the
// pipe closes (which the kernel does when the supervisor dies, however it
// dies), SIGKILLs every group still listed.
const watchdogScript = `set -f
groups=
while read -r op g; do
	case "$op" in
	add) groups="$groups $g" ;;
	del) keep=; for x in $groups; do [ "$x" = "$g" ] || keep="$keep $x"; done; groups=$keep ;;
	esac
done
for x in $groups; do kill -s KILL -- "-$x" 2>/dev/null; done
`

type watchdog struct {
	mu  sync.Mutex
	w   *os.File
	cmd *exec.Cmd
}

// startWatchdog starts the shell. It is not forked with a parent-death
// signal: it must outlive the supervisor to do its job.
func startWatchdog() (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("supervisor: watchdog: %w", err)
	}
	return &watchdog{w: w, cmd: cmd}, nil
}

func (wd *watchdog) send(op string, pgid int) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w != nil {
		// A dead watchdog gives EPIPE (no SIGPIPE on this fd): nothing to do.
		_, _ = fmt.Fprintf(wd.w, "%s %d\n", op, pgid)
	}
}

func (wd *watchdog) add(pgid int) { wd.send("add", pgid) }
func (wd *watchdog) del(pgid int) { wd.send("del", pgid) }

// close ends the watchdog: it kills whatever groups are still listed and
// exits; close reaps it.
func (wd *watchdog) close() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	w := wd.w
	wd.w = nil
	wd.mu.Unlock()
	if w != nil {
		w.Close()
		_ = wd.cmd.Wait()
	}
}
