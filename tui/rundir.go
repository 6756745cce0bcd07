package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/cli"
)

// earlierRunParts are the parts of a run directory that a later run on it
// carries on from, with what each holds.
var earlierRunParts = []struct{ dir, holds string }{
	{"broker", "the topic and the groups' committed offsets (broker/)"},
	{"store", "the usage records and checkpoints (store/)"},
	{"cluster", "a cluster's topic and committed offsets (cluster/)"},
}

// earlierRun lists what an earlier run left in dir that this run would
// resume from; nil for a fresh directory (logs alone do not count).
func earlierRun(dir string) []string {
	var found []string
	for _, p := range earlierRunParts {
		if holdsData(filepath.Join(dir, p.dir)) {
			found = append(found, p.holds)
		}
	}
	return found
}

// holdsData says whether dir has anything but a role's lock file.
func holdsData(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() != "krl.lock" {
			return true
		}
	}
	return false
}

// checkEarlierRun refuses a run directory that holds an earlier run unless
// --resume asks to continue it: consumer-usage would start at that run's
// commits and the totals would include its usage, a lesson nobody chose.
// With --resume it returns the line the timeline opens with.
func checkEarlierRun(dir string, resume bool) (string, error) {
	found := earlierRun(dir)
	if len(found) == 0 {
		return "", nil
	}
	held := strings.Join(found, "; ")
	if !resume {
		return "", cli.Usagef("--data-dir %s holds an earlier run: %s. consumer-usage would resume at that run's committed offsets and the totals would include its usage: add --resume to continue it, or give an empty directory (or no --data-dir, for a fresh one)", dir, held)
	}
	return fmt.Sprintf("continues the earlier run in %s: %s; consumer-usage resumes at that run's committed offsets and the totals include its usage", dir, held), nil
}
