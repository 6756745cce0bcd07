package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
)

// profiled runs f with a CPU profile written to $KRL_CPUPROFILE-<role>-<pid>.pprof
// and a heap profile at its end to $KRL_MEMPROFILE-<role>-<pid>.heap, when
// those variables are set (scripts/bench.sh and the performance notes use
// them: go tool pprof -top FILE). A role ended by SIGKILL writes neither.
func profiled(args []string, f func() int) int {
	if prefix := os.Getenv("KRL_MEMPROFILE"); prefix != "" {
		defer writeHeapProfile(profilePath(prefix, args, "heap"))
	}
	prefix := os.Getenv("KRL_CPUPROFILE")
	if prefix == "" {
		return f()
	}
	out, err := os.Create(profilePath(prefix, args, "pprof"))
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

// profilePath is prefix-<role>-<pid>.ext.
func profilePath(prefix string, args []string, ext string) string {
	role := "dashboard"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		role = args[0]
		if role == "consumer" && len(args) > 1 {
			role += "-" + args[1]
		}
	}
	return fmt.Sprintf("%s-%s-%d.%s", prefix, filepath.Base(role), os.Getpid(), ext)
}

func writeHeapProfile(path string) {
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "KRL_MEMPROFILE: %v\n", err)
		return
	}
	defer out.Close()
	if err := pprof.Lookup("heap").WriteTo(out, 0); err != nil {
		fmt.Fprintf(os.Stderr, "KRL_MEMPROFILE: %v\n", err)
	}
}
