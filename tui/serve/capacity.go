package serve

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Per attendee lab at the default rate (10 sensors, one message each per
// second), measured with scripts/bench-serve.sh: the lab's four child
// processes and its share of the server.
const (
	labMemoryMB   = 230
	labCPUPercent = 10 // of one core
	// reserveMB: the shared broker and store, the presenter's lab and the
	// system.
	reserveMB = 1500
)

// MaxLabsRule says how DefaultMaxLabs sizes the workshop.
func MaxLabsRule() string {
	return fmt.Sprintf("min((memory - %d MB) / %d MB, cores × %d)", reserveMB, labMemoryMB, 100/labCPUPercent/2)
}

// DefaultMaxLabs sizes the workshop to this machine: as many labs as fit
// in memory beside the shared parts, and no more than half the CPU.
func DefaultMaxLabs() int {
	byCPU := runtime.NumCPU() * 100 / labCPUPercent / 2
	n := byCPU
	if mb := memTotalMB(); mb > 0 {
		n = min(n, (mb-reserveMB)/labMemoryMB)
	}
	return max(n, 1)
}

// memTotalMB reads MemTotal from /proc/meminfo (0 when unknown).
func memTotalMB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.Atoi(fields[1])
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
