package supervisor

import (
	"os/exec"
	"runtime"
	"sync"
)

// Children are forked by one goroutine locked to its OS thread for the life
// of the process. On Linux a child's parent-death signal (Pdeathsig) fires
// when the THREAD that forked it exits, not the process: forking from an
// arbitrary goroutine would kill children whenever the Go runtime retires
// that thread (for example when a goroutine that called LockOSThread
// returns). The spawner is shared by every Supervisor in the process and is
// deliberately never stopped.
var (
	spawnerOnce sync.Once
	spawnReqs   chan spawnReq
)

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// spawn starts cmd on the spawner thread. cmd must use *os.File (or nil) for
// its standard streams so Start creates no copying goroutines.
func spawn(cmd *exec.Cmd) error {
	spawnerOnce.Do(func() {
		spawnReqs = make(chan spawnReq)
		go spawner()
	})
	req := spawnReq{cmd: cmd, errc: make(chan error, 1)}
	spawnReqs <- req
	return <-req.errc
}

func spawner() {
	runtime.LockOSThread() // never unlocked: the thread must outlive every child
	for req := range spawnReqs {
		req.errc <- req.cmd.Start()
	}
}
