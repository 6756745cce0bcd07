package ui

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// The README's key table and scenario list are generated: the text between
// each pair of markers is what keysMarkdown and scenariosMarkdown write.
// After changing a key or a scenario, regenerate them with
//
//	go test ./tui/ui -run TestReadme -update
//
// (-update is the golden package's flag; with -run TestReadme no golden
// file is touched).
const readmePath = "../../README.md"

var readmeSections = []struct {
	name     string
	generate func() string
}{
	{"keys", keysMarkdown},
	{"scenarios", scenariosMarkdown},
}

func TestReadme(t *testing.T) {
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"
	for _, s := range readmeSections {
		begin, end := "<!-- "+s.name+":begin -->\n", "<!-- "+s.name+":end -->"
		i, j := strings.Index(readme, begin), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the markers %q … %q", strings.TrimSpace(begin), end)
		}
		got, want := readme[i+len(begin):j], s.generate()
		if got == want {
			continue
		}
		if update {
			readme = readme[:i+len(begin)] + want + readme[j:]
			continue
		}
		t.Errorf("README.md's %s section is not what the code says; run go test ./tui/ui -run TestReadme -update\nwant:\n%s\ngot:\n%s", s.name, want, got)
	}
	if update && readme != string(raw) {
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// keysMarkdown is the key table: every keyed action in the registry's
// order, all its keys and what it does in full.
func keysMarkdown() string {
	km := DefaultKeyMap()
	var b strings.Builder
	b.WriteString("| key | what it does |\n|---|---|\n")
	for _, a := range action.All() {
		keys := km.Binding(a.Name).Keys()
		if len(keys) == 0 {
			continue
		}
		cell, doc := make([]string, len(keys)), a.Doc
		for i, k := range keys {
			if arrow, ok := arrows[k]; ok {
				k = arrow
			}
			cell[i] = "`" + k + "`"
		}
		label := strings.Join(cell, "/")
		if a.Digits {
			label = cell[0] + "–" + cell[len(cell)-1]
			doc += " " + strings.Join(board.Canonical, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s |\n", label, doc)
	}
	return b.String()
}

// arrows are the arrow keys as the help shows them.
var arrows = map[string]string{"up": "↑", "down": "↓"}

// scenariosMarkdown is the scenario list in catalog order: what each shows
// and what it needs to run.
func scenariosMarkdown() string {
	var b strings.Builder
	b.WriteString("| scenario | what it shows | needs |\n|---|---|---|\n")
	for _, sc := range scenario.Catalog() {
		needs := "—"
		if n := sc.Needs(); n != "" {
			needs = "`" + n + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", sc.Name, sc.Summary, needs)
	}
	return b.String()
}
