package serve

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// What one attendee lab costs at the default rate (10 sensors, one message
// each per second), measured with scripts/bench-serve.sh: its four child
// processes and its share of the server, the broker and the store
// (docs/performance.md#workshop).
const (
	// labMemoryMB: about twice a lab's PSS after its first minutes, for
	// what grows over a workshop (the store's page cache, the topic).
	labMemoryMB = 64
	// labCPUPermille of one core: a lab's measured CPU, rounded up.
	labCPUPermille = 60
	// reserveMB: the shared broker and store, the presenter's lab and the
	// system.
	reserveMB = 1500
	// cpuShare: the labs may take half of the machine's CPU; the rest is
	// the presenter's, the system's and the bursts (a rebuild, a replay).
	cpuShare = 2
)

// MaxLabsRule says how DefaultMaxLabs sizes the workshop.
func MaxLabsRule() string {
	return fmt.Sprintf("min((memory - %d MB) / %d MB, cores × %d)", reserveMB, labMemoryMB, labsPerCore)
}

// labsPerCore: the labs half a core serves.
const labsPerCore = 1000 / labCPUPermille / cpuShare

// DefaultMaxLabs sizes the workshop to this machine: as many labs as fit
// in memory beside the shared parts, and no more than half the CPU.
func DefaultMaxLabs() int { return maxLabs(runtime.NumCPU(), memTotalMB()) }

// maxLabs is MaxLabsRule for cores and memMB (0: memory unknown).
func maxLabs(cores, memMB int) int {
	n := cores * labsPerCore
	if memMB > 0 {
		n = min(n, (memMB-reserveMB)/labMemoryMB)
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
