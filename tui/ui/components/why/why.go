// Package why renders the w view: the messages that make a drift, grouped
// by kind, partition and writer and said in words, for the total or for
// one sensor (then each message too).
package why

import (
	"fmt"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Lines is the view in at most height lines of width cells.
func Lines(st *theme.Styles, v board.WhyView, width, height int) []string {
	var out []string
	add := func(s string, style func(...string) string) {
		for i, l := range common.Wrap(s, width-3) {
			if i > 0 { // under the bullet's text
				l = "  " + l
			}
			out = append(out, " "+style(l))
		}
	}
	plain := func(s ...string) string { return s[0] }
	who := "the total"
	if v.SensorID != "" {
		who = v.SensorID
	}
	switch {
	case v.Drift == nil:
		add(who+": no drift to explain yet (no comparison with the audit)", st.Muted.Render)
	case len(v.Groups) == 0 && v.Drift.HoursCents == 0 && v.Drift.KmCents == 0:
		add(who+": exact, every message recorded once as the topic yields it", st.Good.Render)
	default:
		add(fmt.Sprintf("%s: %+.2f h %+.2f km %s, made by %s in %s:", who, v.Drift.Hours(), v.Drift.Km(), v.Verdict,
			board.Plural(int64(v.Messages), "message"), board.Plural(int64(len(v.Groups)), "group")), st.Warn.Render)
	}
	if v.Err != nil {
		add("cannot name the messages: "+v.Err.Error(), st.Bad.Render)
	}
	for _, g := range v.Groups {
		add("• "+g.Words(), plain)
	}
	for _, c := range v.Causes {
		d := c.Drift()
		line := fmt.Sprintf("  p%d@%d %s: recorded %s h %s km · topic %s h %s km · %+.2f h",
			c.Partition, c.Offset, c.Kind, cents(c.RecordedHoursCents), cents(c.RecordedKmCents),
			cents(c.ExpectedHoursCents), cents(c.ExpectedKmCents), d.Hours())
		if c.Records > 1 {
			line += fmt.Sprintf(", %d records", c.Records)
		}
		if c.Inferred {
			line += " (inferred)"
		}
		out = append(out, common.Fit(" "+st.Muted.Render(line), width))
	}
	if len(out) > height {
		more := len(out) - height + 1
		out = append(out[:height-1], " "+st.Muted.Render(fmt.Sprintf("… %d lines more (the --report lists every message)", more)))
	}
	return out
}

func cents(c int64) string { return fmt.Sprintf("%.2f", float64(c)/100) }
