package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestString: every fact of the build is on its line, read from the build
// settings; a dirty tree says so.
func TestString(t *testing.T) {
	i := Info{Version: "1.2.3", Commit: "unknown", CommitTime: "unknown", Go: "go1.26.8", Platform: "linux/amd64", Librdkafka: "2.11.1"}
	i.apply([]debug.BuildSetting{
		{Key: "vcs.revision", Value: "c03c620abc"},
		{Key: "vcs.time", Value: "2026-12-04T04:40:00Z"},
		{Key: "vcs.modified", Value: "true"},
	})
	got := i.String()
	for _, want := range []string{
		"krl 1.2.3\n",
		"commit      c03c620abc (with uncommitted changes)\n",
		"commit date 2026-12-04T04:40:00Z\n",
		"go          go1.26.8 linux/amd64\n",
		"librdkafka  2.11.1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// TestReadLibrdkafka: the librdkafka version comes from the linked library.
func TestReadLibrdkafka(t *testing.T) {
	i := Read()
	if i.Version != "dev" || i.Librdkafka == "" || !strings.HasPrefix(i.Go, "go") {
		t.Fatalf("Read() = %+v", i)
	}
}
