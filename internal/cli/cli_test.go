package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestParseQuiet: a bad flag is returned as a usage error and nothing is
// printed (Exit prints it once); -h prints the usage and returns ErrHelp.
func TestParseQuiet(t *testing.T) {
	var out bytes.Buffer
	fs := flag.NewFlagSet("role", flag.ExitOnError)
	fs.SetOutput(&out)
	fs.Int("n", 1, "a number")
	err := Parse(fs, []string{"--nope"})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "-nope") {
		t.Fatalf("--nope: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("--nope printed %q", out.String())
	}
	var errOut bytes.Buffer
	if code := Exit(&errOut, err); code != ExitUsage || errOut.String() != "error: flag provided but not defined: -nope\n" {
		t.Fatalf("Exit: code %d, printed %q", code, errOut.String())
	}
	errOut.Reset()
	if code := Exit(&errOut, Usagef("unexpected arguments: %v", []string{"x"})); code != ExitUsage || errOut.String() != "error: unexpected arguments: [x]\n" {
		t.Fatalf("Exit of a Usagef: code %d, printed %q", code, errOut.String())
	}
	errOut.Reset()

	if err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(out.String(), "a number") {
		t.Fatalf("-h printed %q, want the usage", out.String())
	}
	if code := Exit(&errOut, flag.ErrHelp); code != ExitOK {
		t.Fatalf("-h: exit code %d", code)
	}
}
