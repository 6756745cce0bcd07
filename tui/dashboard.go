package main

import (
	"fmt"
	"os"
)

// runDashboard is replaced by the real dashboard wiring.
func runDashboard(args []string) int {
	fmt.Fprintln(os.Stderr, "error: the dashboard is not wired yet")
	return 1
}
