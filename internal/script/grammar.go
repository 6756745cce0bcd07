package script

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The grammar of a line: what follows each verb, and the messages for a
// line that does not fit it.

// MaxPartitions bounds add-partitions: a lesson needs a few.
const MaxPartitions = 32

// parseBacklog parses "backlog 4000"; parsePartitions "add-partitions 4".
var (
	parseBacklog    = countArg("message count", 1, MaxHistory, "")
	parsePartitions = countArg("partition count", 2, MaxPartitions, ", above the topic's count")
)

// countArg parses a line whose one argument is a count from lo to hi.
func countArg(what string, lo, hi int, note string) func(Action, grammar, []string) (Action, string) {
	return func(a Action, g grammar, args []string) (Action, string) {
		if len(args) == 0 {
			return a, fmt.Sprintf("%s: missing %s (usage: %s)", a.Kind, what, usage(a.Kind, g))
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < lo || n > hi {
			return a, fmt.Sprintf("%s: bad %s %q (want a number from %d to %d%s)", a.Kind, what, args[0], lo, hi, note)
		}
		a.Count = n
		return a, extra(a.Kind, g, args, 1)
	}
}

// MaxInjectBad bounds inject-bad (the producer's own limit).
const MaxInjectBad = 10000

// extra is the message for arguments after the want ones ("" if none).
func extra(kind Kind, g grammar, args []string, want int) string {
	if len(args) > want {
		return fmt.Sprintf("%s: unexpected %q (usage: %s)", kind, strings.Join(args[want:], " "), usage(kind, g))
	}
	return ""
}

// parseNothing parses a verb alone ("reset-lab", "quit").
func parseNothing(a Action, g grammar, args []string) (Action, string) {
	return a, extra(a.Kind, g, args, 0)
}

// parseDuration parses "wait 5s".
func parseDuration(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing duration (like 5s or 1m30s)", a.Kind)
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d <= 0 {
		return a, fmt.Sprintf("%s: bad duration %q (want a positive duration like 5s or 1m30s)", a.Kind, args[0])
	}
	a.Duration = d
	return a, extra(a.Kind, g, args, 1)
}

// parseValue parses "VERB VALUE" where VALUE is one of g.values ("rebuild snapshot", "acks 1").
func parseValue(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing %s (want %s)", a.Kind, g.what, join(g.values))
	}
	if !slices.Contains(g.values, args[0]) {
		return a, fmt.Sprintf("%s: unknown %s %q (want %s)", a.Kind, g.what, args[0], join(g.values))
	}
	a.Value = args[0]
	return a, extra(a.Kind, g, args, 1)
}

// MaxHistory bounds the topic history grows (the lab's own limit).
const MaxHistory = 10_000_000

// parseHistory parses "history 3s" (until a replay takes that long) and
// "history 1000000" (until the topic holds that many messages).
func parseHistory(a Action, g grammar, args []string) (Action, string) {
	if len(args) > 0 {
		if n, err := strconv.Atoi(args[0]); err == nil {
			if n < 1 || n > MaxHistory {
				return a, fmt.Sprintf("%s: bad message count %q (want a number from 1 to %d)", a.Kind, args[0], MaxHistory)
			}
			a.Count = n
			return a, extra(a.Kind, g, args, 1)
		}
	}
	return parseDuration(a, g, args)
}

// parseCount parses "inject-bad 9".
func parseCount(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing count (like 9: one record of every kind)", a.Kind)
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxInjectBad {
		return a, fmt.Sprintf("%s: bad count %q (want a number from 1 to %d)", a.Kind, args[0], MaxInjectBad)
	}
	a.Count = n
	return a, extra(a.Kind, g, args, 1)
}

// parseProcess parses "crash NAME" and, with values, "mode NAME VALUE".
func parseProcess(a Action, g grammar, args []string) (Action, string) {
	kind := a.Kind
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing process name (want %s)", kind, join(g.names))
	}
	if !slices.Contains(processes, args[0]) {
		return a, fmt.Sprintf("%s: unknown process %q (want %s)", kind, args[0], join(g.names))
	}
	if !slices.Contains(g.names, args[0]) {
		return a, fmt.Sprintf("%s: not possible for %s (only %s)", kind, args[0], join(g.names))
	}
	a.Name = args[0]
	if g.values == nil {
		return a, extra(kind, g, args, 1)
	}
	if len(args) < 2 {
		return a, fmt.Sprintf("%s %s: missing %s (want %s)", kind, a.Name, g.what, join(g.values))
	}
	if !slices.Contains(g.values, args[1]) {
		return a, fmt.Sprintf("%s %s: unknown %s %q (want %s)", kind, a.Name, g.what, args[1], join(g.values))
	}
	a.Value = args[1]
	return a, extra(kind, g, args, 2)
}

// parseNameAndValue reads "VERB NAME VALUE" where NAME is one of g.names:
// the action with its name, the value, or a message.
func parseNameAndValue(a Action, g grammar, args []string) (Action, string, string) {
	kind := a.Kind
	if len(args) == 0 {
		return a, "", fmt.Sprintf("%s: missing process name (usage: %s)", kind, usage(kind, g))
	}
	if !slices.Contains(g.names, args[0]) {
		return a, "", fmt.Sprintf("%s: not possible for %q (only %s)", kind, args[0], join(g.names))
	}
	a.Name = args[0]
	if len(args) < 2 {
		return a, "", fmt.Sprintf("%s %s: missing value (usage: %s)", kind, a.Name, usage(kind, g))
	}
	if len(args) > 2 {
		return a, "", fmt.Sprintf("%s: unexpected %q (usage: %s)", kind, strings.Join(args[2:], " "), usage(kind, g))
	}
	return a, args[1], ""
}

// parseScale parses "scale consumer-usage N".
func parseScale(a Action, g grammar, args []string) (Action, string) {
	a, value, msg := parseNameAndValue(a, g, args)
	if msg != "" {
		return a, msg
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > board.MaxUsageInstances {
		return a, fmt.Sprintf("scale %s: bad instance count %q (want a number from 1 to %d)", a.Name, value, board.MaxUsageInstances)
	}
	a.Count = n
	return a, ""
}

// parseTimeout parses "wait-held NAME 30s" and the other waits on a process.
func parseTimeout(a Action, g grammar, args []string) (Action, string) {
	a, value, msg := parseNameAndValue(a, g, args)
	if msg != "" {
		return a, msg
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return a, fmt.Sprintf("%s %s: bad timeout %q (want a positive duration like 30s)", a.Kind, a.Name, value)
	}
	a.Duration = d
	return a, ""
}

// parseEffectDelay parses "effect-delay NAME 8s".
func parseEffectDelay(a Action, g grammar, args []string) (Action, string) {
	a, value, msg := parseNameAndValue(a, g, args)
	if msg != "" {
		return a, msg
	}
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 || d > MaxEffectDelay {
		return a, fmt.Sprintf("effect-delay %s: bad delay %q (want a duration from 0s to %s, like 8s)", a.Name, value, MaxEffectDelay)
	}
	a.Duration = d
	return a, ""
}

// MaxISR bounds wait-isr's count: --cluster runs at most 5 brokers.
const MaxISR = 5

// parseWaitISR parses "wait-isr N TIMEOUT".
func parseWaitISR(a Action, g grammar, args []string) (Action, string) {
	if len(args) != 2 {
		return a, fmt.Sprintf("wait-isr: want a count and a timeout (usage: %s)", usage(action.WaitISR, g))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxISR {
		return a, fmt.Sprintf("wait-isr: bad count %q (want a number from 1 to %d)", args[0], MaxISR)
	}
	d, err := time.ParseDuration(args[1])
	if err != nil || d <= 0 {
		return a, fmt.Sprintf("wait-isr %d: bad timeout %q (want a positive duration like 60s)", n, args[1])
	}
	a.Count, a.Duration = n, d
	return a, ""
}

// usage is a verb's syntax, for messages.
func usage(k Kind, g grammar) string {
	switch {
	case g.syntax != "":
		return string(k) + " " + g.syntax
	case g.values != nil && g.names == nil:
		return string(k) + " " + strings.Join(g.values, "|")
	case g.values != nil:
		return string(k) + " " + strings.Join(g.names, "|") + " " + strings.Join(g.values, "|")
	case len(g.names) == 1:
		return string(k) + " " + g.names[0]
	case g.names != nil:
		return string(k) + " NAME"
	}
	return string(k)
}

func join[S ~string](xs []S) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = string(x)
	}
	return strings.Join(parts, ", ")
}

// parseSensor parses "park sensor-07" and "park none".
func parseSensor(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing sensor (usage: %s)", a.Kind, usage(a.Kind, g))
	}
	if args[0] != "none" && !strings.HasPrefix(args[0], "sensor-") {
		return a, fmt.Sprintf("%s: bad sensor %q (want sensor-NN, or none)", a.Kind, args[0])
	}
	a.Value = args[0]
	return a, extra(a.Kind, g, args, 1)
}

// parseSensorTimeout parses "wait-last-deleted sensor-07 60s".
func parseSensorTimeout(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 || !strings.HasPrefix(args[0], "sensor-") {
		return a, fmt.Sprintf("%s: missing sensor (usage: %s)", a.Kind, usage(a.Kind, g))
	}
	a.Name = args[0]
	b, msg := parseDuration(a, g, args[1:])
	if msg != "" {
		return a, msg
	}
	return b, extra(a.Kind, g, args, 2)
}
