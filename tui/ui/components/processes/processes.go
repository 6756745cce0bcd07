// Package processes renders the process table: one row per supervised
// process with its recovery strategy, state, pid, uptime and counts.
package processes

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/lag"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the process table.
type Panel struct {
	Styles   *theme.Styles
	Procs    []board.ProcView
	Selected string
	// ShowLag adds a lag column, for layouts without the lag panel beside.
	ShowLag bool
	// Compact uses short strategy labels.
	Compact bool
}

var shortStrategy = map[string]string{
	board.Producer: "telemetry",
	board.Current:  "replay earliest",
	board.Query:    "stateless",
	board.Broker:   "kfake",
	board.Store:    "FerretDB",
}

// View renders the header line and one line per process.
func (p Panel) View(width, height int) string {
	cols := []common.Column{
		{Title: "  #"},
		{Title: "process"},
		{Title: "strategy", Drop: 3, Flex: true, Min: 9},
		{Title: "state"},
		{Title: "pid", Align: common.Right, Drop: 4},
		{Title: "up", Align: common.Right, Drop: 5},
		{Title: "starts", Align: common.Right, Drop: 6},
		{Title: "crashes", Align: common.Right, Drop: 2},
	}
	if p.ShowLag {
		cols = append(cols, common.Column{Title: "lag", Align: common.Right, Drop: 1})
	}
	st := p.Styles
	rows := make([][]common.Cell, len(p.Procs))
	for i, pv := range p.Procs {
		mark := " "
		if pv.Name == p.Selected {
			mark = "▸"
		}
		key := " "
		if pv.Key > 0 {
			key = fmt.Sprint(pv.Key)
		}
		strategy := pv.Strategy
		if p.Compact {
			if s, ok := shortStrategy[pv.Name]; ok {
				strategy = s
			} else if pv.Name == board.Usage {
				strategy = "ckpt+" + pv.Reset
			}
		}
		if pv.Name == board.Usage && p.Compact {
			strategy += " " + pv.Mode
		}
		pid, up := "—", "—"
		if pv.Alive {
			pid = fmt.Sprint(pv.PID)
			up = common.Uptime(pv.Uptime)
		}
		crashes := common.Plain(fmt.Sprint(pv.Crashes))
		if pv.Crashes > 0 {
			crashes.Style = st.Bad
		}
		row := []common.Cell{
			common.Plain(mark + " " + key),
			common.Styled(pv.Name, lipgloss.NewStyle().Bold(true)),
			common.Plain(strategy),
			common.Styled(pv.StateLabel, st.Level(pv.Level)),
			common.Plain(pid),
			common.Plain(up),
			common.Plain(fmt.Sprint(pv.Starts)),
			crashes,
		}
		if p.ShowLag {
			t, lv := lag.Text(pv)
			row = append(row, common.Styled(t, st.Level(lv)))
		}
		rows[i] = row
	}
	rowStyle := func(i int) *lipgloss.Style {
		if p.Procs[i].Name == p.Selected {
			return &st.Selected
		}
		return nil
	}
	head, lines := common.Table(cols, rows, width, st.Header, rowStyle)
	out := append([]string{head}, lines...)
	return strings.Join(common.FitLines(out, width, min(height, len(out))), "\n")
}

// UsageLine is the one-line summary of how consumer-usage runs and what is
// armed on it, with the keys that change it.
func UsageLine(st *theme.Styles, pv board.ProcView, width int) string {
	armed := st.Muted.Render("none")
	if pv.Armed != "" {
		armed = st.Bad.Render(pv.Armed + " (armed)")
	}
	mode := st.Good.Render(pv.Mode)
	if pv.Mode == "naive" {
		mode = st.Warn.Render(pv.Mode)
	}
	s := fmt.Sprintf("consumer-usage: mode %s %s · reset %s %s · crash point %s %s",
		mode, st.Muted.Render("(m)"), lipgloss.NewStyle().Bold(true).Render(pv.Reset), st.Muted.Render("(e)"),
		armed, st.Muted.Render("(c)"))
	if pv.GroupID != "" && lipgloss.Width(s)+len(pv.GroupID)+10 <= width {
		s += st.Muted.Render(" · group " + pv.GroupID)
	}
	return common.Fit(" "+s, width)
}
