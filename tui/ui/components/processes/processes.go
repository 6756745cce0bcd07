// Package processes renders the process table: one row per supervised
// process with its recovery strategy, state, pid, uptime and counts, in
// columns of fixed widths (a state such as "crashed (SIGKILL)" moves
// nothing).
package processes

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/lag"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the process table.
type Panel struct {
	Styles   *theme.Styles
	Procs    []board.ProcView
	Selected string
	// Compact is the 80-column table: no pid, uptime or starts, and a lag
	// column instead of the lag panel beside it.
	Compact bool
}

// Columns widths: the longest process name, strategy and state
// ("crashed (exit 255)"), health ("stuck 12s"), a 7-digit pid, "99h59m".
var (
	colKey      = common.Column{Title: "  #", Width: 3}
	colName     = common.Column{Title: "process", Width: 16}
	colStrategy = common.Column{Title: "strategy", Width: 14}
	colState    = common.Column{Title: "state", Width: 18}
	colHealth   = common.Column{Title: "health", Width: 9}
	colPID      = common.Column{Title: "pid", Align: common.Right, Width: 7}
	colUp       = common.Column{Title: "up", Align: common.Right, Width: 6}
	colStarts   = common.Column{Title: "starts", Align: common.Right, Width: 6}
	colCrashes  = common.Column{Title: "crashes", Align: common.Right, Width: 7}
	colLag      = common.Column{Title: "lag", Align: common.Right, Width: lag.ValueWidth}
)

// Columns is the table's columns in the full or compact layout (80
// columns: no crashes count, health beside the state instead).
func Columns(compact bool) []common.Column {
	if compact {
		return []common.Column{colKey, colName, colStrategy, colState, colHealth, colLag}
	}
	return []common.Column{colKey, colName, colStrategy, colState, colHealth, colPID, colUp, colStarts, colCrashes}
}

// Width is the table's width in the full or compact layout.
func Width(compact bool) int { return common.TableWidth(Columns(compact)) }

// strategy is a process's recovery strategy in at most 14 cells (the
// usage line under the table spells consumer-usage's out). A scaled
// consumer-usage's instances show instead the partitions each owns and,
// when not 0, its second effects prevented and its late writes.
func strategy(pv board.ProcView, scaled bool) string {
	if u := pv.Usage; u != nil && u.Instance > 0 && (scaled || u.Prevented > 0 || u.Late > 0) {
		return InstanceCell(pv)
	}
	if pv.Current != nil && pv.Current.Rebuild != "" {
		return RebuildCell(pv)
	}
	if pv.Usage != nil && pv.Usage.Command != "" {
		return pv.Strategy // the user's command: "yours"
	}
	r, n, ok := role.Of(pv.Name)
	if !ok {
		return pv.Strategy
	}
	if pv.Producer != nil && (pv.Producer.Acks == "1" || pv.Producer.Acks == "0") {
		return "publ. acks=" + pv.Producer.Acks // the lesson's exceptions: said where the producer is
	}
	reset := ""
	if pv.Usage != nil {
		reset = pv.Usage.Reset
	}
	return r.Short.Say(reset, n)
}

// RebuildCell is consumer-current's rebuild strategy in force: "full
// replay", "snapshot", "changelog"; "replay→snap" while the running
// incarnation started with replay and the next start will load a
// snapshot.
func RebuildCell(pv board.ProcView) string {
	if pv.Alive && pv.Current.LastRebuild != nil && pv.Current.LastRebuild.Strategy != pv.Current.Rebuild {
		return rebuildShort[pv.Current.LastRebuild.Strategy] + "→" + rebuildShort[pv.Current.Rebuild]
	}
	if pv.Current.Rebuild == "replay" {
		return "full replay"
	}
	return pv.Current.Rebuild
}

var rebuildShort = map[string]string{"replay": "replay", "snapshot": "snap", "changelog": "chlog"}

// InstanceCell is a consumer-usage instance: "p[0 2] prev 3 late 1"
// (partitions owned, second effects prevented, late writes; the table cuts
// it at 14 cells, the report has the figures), "p[]" while it owns none,
// "p[?]" before its first assignment, "—" while it is down.
func InstanceCell(pv board.ProcView) string {
	s := "—"
	switch {
	case pv.Usage.Partitions != nil:
		parts := make([]string, len(pv.Usage.Partitions))
		for i, n := range pv.Usage.Partitions {
			parts[i] = fmt.Sprint(n)
		}
		s = "p[" + strings.Join(parts, " ") + "]"
	case pv.Alive:
		s = "p[?]"
	}
	if pv.Usage.Prevented > 0 {
		s += fmt.Sprintf(" prev %d", pv.Usage.Prevented)
	}
	if pv.Usage.Late > 0 {
		s += fmt.Sprintf(" late %d", pv.Usage.Late)
	}
	return s
}

// View renders the header line and one line per process.
func (p Panel) View(width, height int) string {
	cols := Columns(p.Compact)
	st := p.Styles
	instances := 0
	for _, pv := range p.Procs {
		if pv.Usage != nil && pv.Usage.Instance > 0 {
			instances++
		}
	}
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
		pid, up := "—", "—"
		if pv.Alive {
			pid = fmt.Sprint(pv.PID)
			up = common.Uptime(pv.Uptime)
		}
		crashes := common.Plain(fmt.Sprint(pv.Crashes))
		if pv.Crashes > 0 {
			crashes.Style = st.Bad
		}
		head := []common.Cell{
			common.Plain(mark + " " + key),
			common.Styled(pv.Name, st.Strong),
			common.Plain(strategy(pv, instances > 1)),
			common.Styled(pv.StateLabel, st.Level(pv.Level)),
			common.Styled(pv.Health.Label, st.Level(pv.Health.Level)),
		}
		if p.Compact {
			t, lv := lag.Text(pv)
			rows[i] = append(head, common.Styled(t, st.Level(lv)))
		} else {
			rows[i] = append(head, common.Plain(pid), common.Plain(up), common.Plain(fmt.Sprint(pv.Starts)), crashes)
		}
	}
	rowStyle := func(i int) *lipgloss.Style {
		if p.Procs[i].Name == p.Selected {
			return &st.Selected
		}
		return nil
	}
	head, lines := common.Table(st.Renderer(), cols, rows, width, st.Header, rowStyle)
	out := append([]string{head}, lines...)
	return strings.Join(common.FitLines(out, width, min(height, len(out))), "\n")
}

// UsageLine is the one-line summary of how consumer-usage runs and what is
// armed on it, with the keys that change it, and what its lag means when
// it is not a plain number.
func UsageLine(st *theme.Styles, pv board.ProcView, procs []board.ProcView, width int) string {
	armed := st.Muted.Render("none")
	if pv.Armed != "" {
		armed = st.Bad.Render(pv.Armed + " (armed)")
	}
	mode := st.Good.Render(pv.Usage.Mode)
	if pv.Usage.Mode == "naive" {
		mode = st.Warn.Render(pv.Usage.Mode)
	}
	s := fmt.Sprintf("consumer-usage: mode %s %s · reset %s %s · crash point %s %s",
		mode, st.Muted.Render("(m)"), st.Strong.Render(pv.Usage.Reset), st.Muted.Render("(e)"),
		armed, st.Muted.Render("(c)"))
	if pv.Usage.Command != "" {
		s = "consumer-usage: your command " + st.Strong.Render(pv.Usage.Command)
	}
	// Then what its lag means when it is not a plain number, else its group.
	var extras []string
	if g := GroupLine(procs); g != "" {
		s += st.Muted.Render(" · ") + g
	}
	if note := lag.Note(pv); note != "" {
		extras = []string{st.Warn.UnsetBold().Render(" · " + note), st.Warn.UnsetBold().Render(" · lag " + lag.ShortNote(pv))}
	} else if pv.GroupID != "" {
		extras = []string{st.Muted.Render(" · group " + pv.GroupID)}
	}
	for _, extra := range extras {
		if lipgloss.Width(s)+lipgloss.Width(extra)+1 <= width {
			s += extra
			break
		}
	}
	return common.Fit(" "+s, width)
}

// GroupLine says how many instances a scaled consumer-usage runs and the
// effect delays set: "3 instances (+/-) · effect delay 8s on -2"; "" with
// one instance and no delay.
func GroupLine(procs []board.ProcView) string {
	var n int
	var delays []string
	for _, pv := range procs {
		if pv.Usage == nil || pv.Usage.Instance == 0 {
			continue
		}
		n++
		if pv.Usage.EffectDelay > 0 {
			who := strings.TrimPrefix(pv.Name, board.Usage)
			if who == "" {
				who = board.Usage
			}
			delays = append(delays, pv.Usage.EffectDelay.String()+" on "+who)
		}
	}
	var parts []string
	if n > 1 {
		parts = append(parts, fmt.Sprintf("%d instances (+/-)", n))
	}
	if len(delays) > 0 {
		parts = append(parts, "effect delay "+strings.Join(delays, ", "))
	}
	return strings.Join(parts, " · ")
}

// InvalidSkipped is how many invalid messages consumer-current and
// consumer-usage (all its instances) have skipped: the sensors and the
// usage panels say it, each of its own consumer.
func InvalidSkipped(procs []board.ProcView) (current, usage int64) {
	for _, pv := range procs {
		switch {
		case !board.ReadsMessages(pv.Name):
		case pv.Name == board.Current:
			current += pv.Invalid
		default:
			usage += pv.Invalid
		}
	}
	return current, usage
}
