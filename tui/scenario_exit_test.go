package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

func TestScenarioExitCode(t *testing.T) {
	failed := &scenario.Result{Name: "replay", Checks: []scenario.CheckResult{{What: "x", Passed: false}}}
	passed := &scenario.Result{Name: "replay", Passed: true, Checks: []scenario.CheckResult{{What: "x", Passed: true}}}
	tests := []struct {
		res        *scenario.Result
		code, want int
	}{
		{nil, cli.ExitOK, cli.ExitOK},
		{passed, cli.ExitOK, cli.ExitOK},
		{failed, cli.ExitOK, cli.ExitError},
		{passed, cli.ExitError, cli.ExitError}, // a failure elsewhere stays one
	}
	for i, tc := range tests {
		if got := scenarioExitCode(tc.res, tc.code); got != tc.want {
			t.Errorf("%d: exit code %d, want %d", i, got, tc.want)
		}
	}
}

// TestScenarioReportShape: the report is the board's snapshot with a
// "scenario" object {name, passed, checks: [{what, passed, observed}]}, and
// no scenario key at all without one.
func TestScenarioReportShape(t *testing.T) {
	dir := t.TempDir()
	rep := dashboardReport{Report: board.New([]string{board.Producer}, board.Config{}).Report(),
		Scenario: &scenario.Result{Name: "stateless", Passed: true,
			Checks: []scenario.CheckResult{{What: "answers at once", Passed: true, Observed: "first answer 300ms after the restart", Pending: true}}}}
	path := filepath.Join(dir, "r.json")
	if err := writeReport(path, rep); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["processes"]; !ok {
		t.Fatalf("the board's snapshot is not flattened into the report: %s", b)
	}
	sc, _ := got["scenario"].(map[string]any)
	checks, _ := sc["checks"].([]any)
	if sc["name"] != "stateless" || sc["passed"] != true || len(checks) != 1 {
		t.Fatalf("scenario: %s", b)
	}
	c := checks[0].(map[string]any)
	if c["what"] != "answers at once" || c["passed"] != true || c["observed"] != "first answer 300ms after the restart" || len(c) != 3 {
		t.Fatalf("check: %v", c)
	}

	rep.Scenario = nil
	if err := writeReport(path, rep); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "scenario") {
		t.Fatalf("a report without a scenario has the key: %s", b)
	}
}
