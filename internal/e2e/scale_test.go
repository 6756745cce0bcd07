package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestScaleUsage scales consumer-usage to 3 instances in its group and
// back to 1, on the headless dashboard. The script waits on the board
// (wait-caught-up holds until the live instances own every partition
// once), never on a bare sleep. Two runs, because --report is written at
// exit: the first ends scaled to 3, the second scaled back to 1.
func TestScaleUsage(t *testing.T) {
	t.Run("up to 3", func(t *testing.T) {
		d := newDashboard(t)
		d.startHeadless(`
wait-caught-up 60s
scale consumer-usage 3
wait-caught-up 90s
quit
`, "--usage-mode", "guarded", "--interval", "50ms", "--seed", "21")
		if code := d.waitExit(3 * time.Minute); code != 0 {
			t.Fatalf("dashboard exited %d", code)
		}
		r := d.readReport()
		var union []int32
		for _, name := range []string{"consumer-usage", "consumer-usage-2", "consumer-usage-3"} {
			p := r.proc(t, name)
			if p.State != "running" || p.Partitions == nil || len(*p.Partitions) != 1 || p.Prevented == nil || p.Late == nil {
				t.Fatalf("%s: state %s, partitions %v, prevented %v, late %v", name, p.State, fmtParts(p.Partitions), p.Prevented, p.Late)
			}
			union = append(union, *p.Partitions...)
		}
		if slices.Sort(union); !slices.Equal(union, []int32{0, 1, 2}) {
			t.Fatalf("the instances own %v between them, want [0 1 2]", union)
		}
		for _, p := range r.Processes {
			if !strings.HasPrefix(p.Name, "consumer-usage") && p.Partitions != nil {
				t.Errorf("%s has partitions in the report", p.Name)
			}
		}
		if !strings.Contains(d.stderr(), "consumer-usage-3 started") {
			t.Error("the event log does not show consumer-usage-3 starting")
		}
		awaitNoProcesses(t, d.tag, childPIDsFromLogs(t, d.runDir), 15*time.Second)
	})
	t.Run("up to 3 and back to 1", func(t *testing.T) {
		d := newDashboard(t)
		d.startHeadless(`
wait-caught-up 60s
scale consumer-usage 3
wait-caught-up 90s
scale consumer-usage 1
wait-caught-up 90s     # the stopped static members' partitions come back after their session timeout
quit
`, "--usage-mode", "guarded", "--interval", "50ms", "--seed", "22")
		if code := d.waitExit(4 * time.Minute); code != 0 {
			t.Fatalf("dashboard exited %d", code)
		}
		r := d.readReport()
		p := r.proc(t, "consumer-usage")
		if p.State != "running" || p.Partitions == nil || !slices.Equal(*p.Partitions, []int32{0, 1, 2}) {
			t.Fatalf("consumer-usage: state %s, partitions %v, want running with [0 1 2]", p.State, fmtParts(p.Partitions))
		}
		for _, q := range r.Processes {
			if q.Name == "consumer-usage-2" || q.Name == "consumer-usage-3" {
				t.Errorf("%s still in the report after scaling to 1", q.Name)
			}
		}
		for _, want := range []string{"consumer-usage-2 stopped (exit 0", "consumer-usage-3 stopped (exit 0", "consumer-usage-3 removed from the dashboard"} {
			if !strings.Contains(d.stderr(), want) {
				t.Errorf("the event log has no %q", want)
			}
		}
		awaitNoProcesses(t, d.tag, childPIDsFromLogs(t, d.runDir), 15*time.Second)
	})
}

func fmtParts(p *[]int32) any {
	if p == nil {
		return "absent"
	}
	return *p
}
