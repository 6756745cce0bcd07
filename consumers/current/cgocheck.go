package current

import (
	"os"
	"strings"
	"syscall"
)

// withoutCgoCheck runs the process again, in place (same PID), with the Go
// runtime's check of cgo pointer arguments off (GODEBUG cgocheck=0), unless
// it is off already. A replay makes four cgo calls per record through
// confluent-kafka-go's Poll, and checking their arguments took a tenth of
// the replay's CPU (runtime.cgoCheckPointer and cgoCheckArg in pprof). The
// GODEBUG setting cannot be given in the source (go:debug does not take
// it). The other roles and the tests keep the check, so the library's
// calls stay checked somewhere. It returns only when the exec failed.
func withoutCgoCheck() {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(","+godebug+",", ",cgocheck=0,") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + "cgocheck=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env)
}
