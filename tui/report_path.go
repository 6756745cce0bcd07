package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kafka-recovery-lab/krl/internal/cli"
)

// checkReportPath makes sure --report can be written before the run
// begins, so a typo costs a second and not a whole run: the path must not be
// a directory and its directory must take a new file (the report is written
// to a temporary file beside it, then renamed).
func checkReportPath(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return cli.Usagef("--report %s is a directory: name a file", path)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".krl-report-*")
	if err != nil {
		return cli.Usagef("--report %s cannot be written: %v", path, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// unwrapPath is err without the probe file's name, which means nothing to
// the user.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", filepath.Dir(pe.Path), pe.Err)
	}
	return err
}
