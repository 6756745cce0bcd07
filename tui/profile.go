package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
)

// profiled runs f with a CPU profile written to $KRL_CPUPROFILE-<role>-<pid>.pprof
// when that variable is set (scripts/bench.sh and the performance notes
// use it: go tool pprof -top FILE). A role ended by SIGKILL writes none.
func profiled(args []string, f func() int) int {
	prefix := os.Getenv("KRL_CPUPROFILE")
	if prefix == "" {
		return f()
	}
	role := "dashboard"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		role = args[0]
		if role == "consumer" && len(args) > 1 {
			role += "-" + args[1]
		}
	}
	path := fmt.Sprintf("%s-%s-%d.pprof", prefix, filepath.Base(role), os.Getpid())
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "KRL_CPUPROFILE: %v\n", err)
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintf(os.Stderr, "KRL_CPUPROFILE: %v\n", err)
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}
