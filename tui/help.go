package main

import (
	"fmt"
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// keysHelp lists the dashboard's keys as its '?' view does, from the one key
// map the dashboard uses.
func keysHelp() string {
	km := ui.DefaultKeyMap().WithEnabled(true, action.Scenarios) // the dashboard always offers its scenarios
	var b strings.Builder
	for _, column := range km.FullHelp() {
		for _, k := range column {
			if !k.Enabled() {
				continue
			}
			fmt.Fprintf(&b, "  %-10s %s\n", k.Help().Key, k.Help().Desc)
		}
	}
	return b.String()
}
