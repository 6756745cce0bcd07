package main

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/e2e"
)

// TestVersionCommand: krl --version and krl version print the same build
// facts, none of them empty: a build without -X says "dev", and the
// librdkafka line is the linked library's.
func TestVersionCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := e2e.Binary(t)
	want := regexp.MustCompile(`^krl dev\ncommit      \S+.*\ncommit date \S+\ngo          go1\.\S+ \w+/\w+\nlibrdkafka  \d+\.\d+\.\d+\S*\n$`)
	var outputs []string
	for _, arg := range []string{"--version", "version", "-version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("krl %s: %v", arg, err)
		}
		if !want.Match(out) {
			t.Errorf("krl %s printed:\n%s", arg, out)
		}
		outputs = append(outputs, string(out))
	}
	if outputs[0] != outputs[1] || outputs[1] != outputs[2] {
		t.Errorf("the three spellings differ:\n%s\n%s\n%s", outputs[0], outputs[1], outputs[2])
	}
}
