package ui

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/cost"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/events"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/help"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/lag"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/logs"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/partitions"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/processes"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/sensors"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/usage"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/why"
)

// Layout thresholds: boxes, the lag panel and every column from the
// designed size (120x36) up; below it, down to 80x24, a borderless layout
// with fewer columns. In each the columns are fixed: values and states
// never move or drop one.
const (
	fullWidth  = 120
	fullHeight = 30
	// sensorRowsReserved keeps the layout still while sensors appear (the
	// producer's default fleet is 10).
	sensorRowsReserved = 10
)

// stackJoins: in the full layout the processes box, the sensors and usage
// and the events share the borders between them (common.Stack), which
// leaves the panels this many lines more.
const stackJoins = 2

// minEventLines: the partitions panel takes no room that would leave the
// events fewer lines than this (in the full layout, their box's inside),
// nor any a scenario's narration needs.
const minEventLines = 3

// Up to maxPartitionLines partitions keep a line each in the full layout
// (a presenter points at them) at the sensors' and usage's expense, down
// to fullMiddleMin lines of their boxes: status, header, a few rows (the
// drifting ones first), the hidden rows' line and the total.
const (
	maxPartitionLines = 6
	fullMiddleMin     = 11
)

// In the compact layout the events keep compactEventLines while the
// sensors and usage keep compactMiddleMin lines (status, header, rows, the
// hidden rows' line and the total); on a shorter screen the events give
// way before a sensor row does.
const (
	compactEventLines = 3
	compactMiddleMin  = 9
)

// eventsRoom is the events box's inner height in the full layout when the
// top box is top lines high and the sensors and usage keep all their rows.
func (m Model) eventsRoom(h, top int, footer string) int {
	rest := fullRest(h, top, footer)
	return rest - min(m.middleRows()+2+2, rest-3) - 2
}

// fullRest is the height the full layout leaves the sensors and usage and
// the events, below a processes box of top lines.
func fullRest(h, top int, footer string) int {
	return h - 1 - top - 1 - len(common.Lines(footer)) + stackJoins
}

// fullMiddleH is the sensors' and usage's height in the full layout: all
// their rows while the events keep minEventLines, never below
// fullMiddleMin.
func fullMiddleH(rows, rest int) int {
	return min(rows+2+2, max(rest-minEventLines-2, min(fullMiddleMin, rest-3)))
}

// middleRows is the rows the sensors and usage tables want.
func (m Model) middleRows() int {
	sv, uv := m.board.Sensors(), m.board.Usage()
	return max(len(sv.Rows), len(uv.Rows)+1, sensorRowsReserved)
}

// screen is the frame's parts and the heights of the areas between them,
// as View lays them out; the scroll keys size their viewports from it.
type screen struct {
	full                bool
	header, top, footer string
	middleH, eventsH    int // eventsH: the events' or the narration's area
	sensors             board.SensorsView
	usage               board.UsageView
}

func (m Model) screen() screen {
	w, h := m.width, m.height
	full := w >= fullWidth && h >= fullHeight
	st := m.styles
	sc := screen{full: full, header: m.header(w)}
	// While the producer is paused p resumes it: the help says so.
	producer := m.board.Process(board.Producer).Producer
	keys := m.keys.WithUndoing(producer != nil && producer.Paused, action.Pause)
	if m.board.UsageCmd() != "" {
		// The lab refuses them for the user's consumer: not offered.
		keys = keys.WithEnabled(false, action.BuiltInUsageOnly()...)
	}
	sc.footer = help.Footer{Styles: st, Keys: keys, ShowAll: m.overlay.help, Pinned: keys.Pinned()}.View(w, h/3)

	procs := m.board.Processes()
	if full {
		inner := w - 2
		// The lag panel right after the table, whatever the width.
		// A wide terminal gives the sparkline a bar a second.
		bars := lag.Bars
		if inner-processes.Width(false)-1 >= lag.WidthFor(lag.WideBars) {
			bars = lag.WideBars
		}
		rows := processes.Panel{Styles: st, Procs: procs, Selected: m.selected}.View(min(processes.Width(false), inner-lag.WidthFor(bars)-1), len(procs)+1)
		floor := common.SparkFloor(m.fleet())
		lagCol := lag.Panel{Styles: st, Procs: procs, Bars: bars, Floor: floor}.View(lag.WidthFor(bars), len(procs)+1)
		body := common.Lines(lipgloss.JoinHorizontal(lipgloss.Top, rows, " ", lagCol))
		if m.board.Has(board.Usage) {
			body = append(body, processes.UsageLine(st, m.board.Process(board.Usage), procs, inner))
		}
		title := "Processes · lag (" + common.SparkLegend(floor) + ")"
		lines, more := m.partitionLines(len(body)+m.rowsToCome(), inner, h, sc.footer)
		body = append(body, lines...)
		title += more
		sc.top = common.Box(st, title, body, w, len(body)+2)
	} else {
		sc.top = processes.Panel{Styles: st, Procs: procs, Selected: m.selected, Compact: true}.View(w, len(procs)+1)
	}

	rest := h - 1 - len(common.Lines(sc.top)) - 1 - len(common.Lines(sc.footer))
	if full {
		rest += stackJoins
	}
	sc.sensors, sc.usage = m.board.Sensors(), m.board.Usage()
	rows := max(len(sc.sensors.Rows), len(sc.usage.Rows)+1, sensorRowsReserved)
	if full {
		sc.middleH = fullMiddleH(rows, rest)
	} else {
		sc.middleH = min(rows+2, rest)
		// The events keep a few lines (what just happened is the story of
		// a crash or a rebalance) while the tables keep their status, header,
		// some rows and the total; the rows left out are said, the
		// drifting ones kept (usage.keptRows).
		if rest-sc.middleH < compactEventLines && rest-compactEventLines >= compactMiddleMin {
			sc.middleH = rest - compactEventLines
		}
	}
	sc.eventsH = rest - sc.middleH
	if m.narration != nil && !m.overlay.is(pickerPanel) && !m.overlay.is(logsPanel) {
		// The narration takes the events' place, and room from the
		// sensors and usage when the events area is too small for it.
		need := narrationCompact
		if full {
			// The whole step and its checks, without scrolling, while the
			// sensors and usage keep their status and header lines.
			need = max(narrationFull, m.narrationPanel().Height(w-2)+2)
		}
		if sc.eventsH < need {
			sc.middleH = max(rest-need, 3)
			sc.eventsH = rest - sc.middleH
		}
	}
	return sc
}

// fleet is the producer's sensors, or, before it said, the sensors the
// panels already know (0: none yet).
func (m Model) fleet() int {
	if n := m.board.Fleet(); n > 0 {
		return n
	}
	return max(len(m.board.Sensors().Rows), len(m.board.Usage().Rows))
}

// rowsToCome is how many rows the processes table can still gain this
// session (consumer-usage scaled out): the partitions are laid out for
// the table at its largest, so that scaling never folds them.
func (m Model) rowsToCome() int {
	if !m.board.Has(board.Usage) {
		return 0
	}
	return max(0, board.MaxUsageInstances-len(m.board.UsageInstances()))
}

// partitionLines is what the processes box shows of the partitions, and
// what its title says of them: a line per partition while the events keep
// minEventLines (with reserved lines above them), or up to
// maxPartitionLines of them while the sensors and usage keep
// fullMiddleMin; else all of them on one line, else none (on one node). A
// narration needs its whole box instead.
func (m Model) partitionLines(reserved, inner, h int, footer string) ([]string, string) {
	pv := m.board.Partitions()
	if !pv.Seen || m.overlay.is(partitionsPanel) {
		return nil, ""
	}
	need := minEventLines
	if m.narration != nil && !m.overlay.is(pickerPanel) && !m.overlay.is(logsPanel) {
		need = narrationFull - 2
	}
	pp := partitions.Panel{Styles: m.styles, View: pv}
	lines := pp.Lines(inner)
	switch {
	case m.eventsRoom(h, reserved+2+len(lines), footer) >= need:
		return lines, " · partitions of " + pv.Topic
	case need == minEventLines && len(pv.Rows) <= maxPartitionLines &&
		fullRest(h, reserved+2+len(lines), footer)-need-2 >= fullMiddleMin:
		// Not during a narration: its step is the lesson then, and the
		// tables keep their rows beside it.
		return lines, " · partitions of " + pv.Topic
	case m.eventsRoom(h, reserved+2+1, footer) >= need || !pv.SingleNode || pv.Growth != nil:
		// With a replicated cluster the leaders and ISRs are the lesson,
		// and so are the partitions once some were added: their line
		// stays, at the events' (or the sensors') expense.
		return []string{pp.Summary(inner)}, " · partitions"
	}
	return nil, ""
}

// View renders the whole screen, exactly width×height.
func (m Model) View() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if w < MinWidth || h < MinHeight {
		return m.tooSmall()
	}
	sc := m.screen()
	full := sc.full
	statusLine := m.statusLine(w, !full)
	var areas []string
	switch {
	case m.overlay.is(pickerPanel):
		areas = []string{m.pickerView(w, sc.wholeLowerH(), full)}
	case m.overlay.is(logsPanel):
		areas = []string{m.logsView(w, sc.wholeLowerH(), full)}
	case m.narration != nil:
		areas = []string{m.middleOrPartitions(sc, w, full), m.narrationView(w, sc.eventsH, full)}
	case sc.eventsH == 0:
		areas = []string{m.middleOrPartitions(sc, w, full)}
	default:
		areas = []string{m.middleOrPartitions(sc, w, full), m.events(w, sc.eventsH, full)}
	}
	body := strings.Join(append([]string{sc.top}, areas...), "\n")
	if full {
		body = common.Stack(m.styles, append([]string{sc.top}, areas...)...)
	}
	return strings.Join([]string{sc.header, body, statusLine, sc.footer}, "\n")
}

// wholeLowerH is the height of one area in the place of both the middle
// and the events: in the full layout it shares one border fewer.
func (sc screen) wholeLowerH() int {
	if sc.full {
		return sc.middleH + sc.eventsH - 1
	}
	return sc.middleH + sc.eventsH
}

// middleOrPartitions is the sensors and usage, or the t view in their place.
func (m Model) middleOrPartitions(sc screen, w int, full bool) string {
	if m.overlay.is(whyPanel) {
		return m.whyView(w, sc.middleH, full)
	}
	if m.narration != nil && m.narration.Panel == scenario.PanelCost && !m.overlay.is(partitionsPanel) {
		return m.costView(w, sc.middleH, full)
	}
	if !m.overlay.is(partitionsPanel) {
		return m.middle(sc.sensors, sc.usage, w, sc.middleH, full)
	}
	st := m.styles
	bw, bh := partitionsBody(w, sc.middleH, full)
	lines := m.partitionsDetail(bw)
	title := "Partitions of " + m.board.Partitions().Topic + " · t or esc closes"
	off := min(m.scrollOffset(), max(0, len(lines)-bh))
	if len(lines) > bh && bh > 0 {
		title += fmt.Sprintf(" · lines %d-%d of %d · [ ] scroll", off+1, off+bh, len(lines))
		lines = lines[off : off+bh]
	}
	if full {
		return common.Box(st, title, lines, w, sc.middleH)
	}
	return common.Section(st.Title.Render(title), lines, w, sc.middleH)
}

// partitionsBody is the partitions view's body size in an area of w×h.
func partitionsBody(w, h int, full bool) (int, int) {
	if full {
		return w - 2, h - 2
	}
	return w, h - 1
}

// partitionsDetail is every line of the partitions view at body width w.
func (m Model) partitionsDetail(w int) []string {
	return partitions.Panel{Styles: m.styles, View: m.board.Partitions()}.Detail(w)
}

// costView is the rebuild-cost chart in the sensors' and usage's place,
// while its scenario's narration is on.
func (m Model) costView(w, h int, full bool) string {
	st := m.styles
	p := cost.Panel{Styles: st, View: m.board.Cost()}
	if full {
		return common.Box(st, cost.Title(), p.Lines(w-2, h-2), w, h)
	}
	return common.Section(st.Title.Render(cost.Title()), p.Lines(w, h-1), w, h)
}

// whyView is the w view in the sensors' and usage's place.
func (m Model) whyView(w, h int, full bool) string {
	st := m.styles
	v := m.board.Why(m.whySensor)
	title := "Why: the drift of the total · w next sensor, esc closes"
	if v.SensorID != "" {
		title = "Why: the drift of " + v.SensorID + " · w next sensor, esc closes"
	}
	if full {
		return common.Box(st, title, why.Lines(st, v, w-2, h-2), w, h)
	}
	return common.Section(st.Title.Render(title), why.Lines(st, v, w, h-1), w, h)
}

func (m Model) middle(sv board.SensorsView, uv board.UsageView, w, h int, full bool) string {
	st := m.styles
	up := usage.New(st, uv, !full)
	if m.board.Has(board.Usage) {
		up = up.WithWriter(m.board.Process(board.Usage))
	}
	sp := sensors.New(st, sv, !full)
	sp.Invalid, up.Invalid = processes.InvalidSkipped(m.board.Processes())
	sw, uw := middleSplit(w, full)
	if full {
		// One border between them: the left box is a cell wider and
		// gives its right edge to the shared one.
		left := common.Box(st, sensors.Title(), common.Lines(sp.View(sw, h-2)), sw+2, h)
		right := common.Box(st, up.Title(), common.Lines(up.View(uw, h-2)), uw+2, h)
		return common.Beside(st, left, right)
	}
	left := sp.View(sw, h)
	right := up.View(uw, h)
	bar := strings.TrimSuffix(strings.Repeat(st.Border.Render("│")+"\n", h), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, left, bar, right)
}

// middleSplit is how the sensors and usage tables share a width of w (their
// insides, without borders): the usage takes the columns a class needs
// first (usage.Columns) while the sensors keep their least (the sensor,
// its hours and the audit's check), and the sensors take the rest; once
// both hold every column, what is left is shared in proportion to their
// widths, and each widens its columns to fill its part.
func middleSplit(w int, full bool) (sensorsW, usageW int) {
	total := w - 1 // the bar between them
	if full {
		total = w - 3 // the boxes' outer borders and the shared one
	}
	usageW = usage.WidthFor(total - sensors.MinWidth())
	sensorsW = total - usageW
	if extra := sensorsW - sensors.Width(); extra > 0 && usageW >= usage.Width() {
		share := extra * usage.Width() / (usage.Width() + sensors.Width())
		usageW += share
		sensorsW -= share
	}
	return sensorsW, usageW
}

func (m Model) events(w, h int, full bool) string {
	st := m.styles
	evs := m.board.Events()
	if full {
		body := events.Panel{Styles: st, Events: evs}.View(w-2, h-2)
		return common.Box(st, events.Title(), common.Lines(body), w, h)
	}
	body := events.Panel{Styles: st, Events: evs}.View(w, h)
	return strings.Join(common.FitLines(common.Lines(body), w, h), "\n")
}

func (m Model) logsView(w, h int, full bool) string {
	st := m.styles
	bw, bh := logsBody(w, h, full)
	p := m.logsPanel(bw)
	body := common.Lines(p.View(bw, bh))
	if full {
		return common.Box(st, p.Title(bw, bh), body, w, h)
	}
	return common.Section(st.Title.Render(p.Title(bw, bh)), body, w, h)
}

// logsBody is the log viewport's size in an area of w×h.
func logsBody(w, h int, full bool) (int, int) {
	if full {
		return w - 2, h - 2
	}
	return w, h - 1
}

// logsPanel is the log view at a body width of w: each line wrapped whole,
// its end (often the useful part: a point, an error) never cut off.
func (m Model) logsPanel(w int) logs.Panel {
	lines := m.logLines
	if !m.logFetched || len(lines) == 0 {
		lines = m.board.Tail(m.logName, m.opts.LogLines)
	}
	return logs.Panel{Styles: m.styles, Name: m.logName, Lines: logs.Wrap(lines, w), Back: m.scrollOffset()}
}

func (m Model) header(w int) string {
	st := m.styles
	cfg := m.board.Config()
	sep := st.Muted.Render(" │ ")
	bold := st.Strong
	addrs := []string{"brokers " + bold.Render(orDash(cfg.Brokers)), "mongo " + bold.Render(orDash(mongoHost(cfg.Mongo)))}
	right := ""
	if now := m.board.Now(); !now.IsZero() {
		right = st.Muted.Render(now.Format("15:04:05"))
	}
	if cfg.Resumed {
		// The run goes on from an earlier one in its directory: its
		// totals include that run's (the timeline's first line says what
		// carried over).
		right = strings.TrimSuffix(st.Warn.Render("resumed")+" "+right, " ")
	}
	title := st.App.Render("Kafka Recovery Lab")
	if m.opts.Banner != "" {
		title = m.brand(title, sep, w-lipgloss.Width(strings.Join(addrs, sep)+sep)-lipgloss.Width(right)-1)
	}
	left := strings.Join(append([]string{title}, addrs...), sep)
	// The run directory gives way first (from its start: its end names the
	// run), then the product name (to a banner too: brand); the clock stays.
	if room := w - lipgloss.Width(left+sep+"run ") - lipgloss.Width(right) - 1; cfg.RunDir != "" && room >= 12 {
		left += sep + "run " + keepEnd(cfg.RunDir, room)
	}
	if lipgloss.Width(left)+lipgloss.Width(right)+1 > w {
		left = strings.Join(addrs, sep)
		if cfg.RunDir != "" {
			left += sep + "run " + cfg.RunDir
		}
	}
	if gap := w - lipgloss.Width(left) - lipgloss.Width(right); gap >= 1 && right != "" {
		return left + strings.Repeat(" ", gap) + right
	}
	return common.Fit(left, w)
}

// bannerMin is the fewest cells a cut banner is shown in.
const bannerMin = 8

// brand is the product name and the banner in room cells (what the
// addresses and the clock leave): the banner has that room before the run
// directory, the product name gives way to it, and it is cut (to no fewer
// than bannerMin cells) only when it does not fit alone. When not even
// that fits it is the product name alone, as without a banner.
func (m Model) brand(title, sep string, room int) string {
	st, banner := m.styles, m.opts.Banner
	bw := lipgloss.Width(banner)
	switch {
	case lipgloss.Width(title+sep)+bw <= room:
		return title + sep + st.Strong.Render(banner)
	case bw <= room:
		return st.Strong.Render(banner)
	case room >= bannerMin:
		return st.Strong.Render(ansi.Truncate(banner, room, "…"))
	}
	return title
}

// keepEnd shortens s to width cells by cutting its start ("…" marks it).
func keepEnd(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return "…" + string(r[len(r)-width+1:])
}

// mongoHost shows a MongoDB URI by its hosts only: no scheme, and never
// credentials on a projected screen.
func mongoHost(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return uri
	}
	return u.Host
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// statusLine shows the last action's result; the compact layout has no
// usage line in the process box, so it carries consumer-usage's mode here.
func (m Model) statusLine(w int, compact bool) string {
	if m.confirm != nil {
		return m.question(w)
	}
	st := m.styles
	text, level := m.status, m.statusLevel
	if text == "" && m.opts.ReadOnly {
		// A read-only view says so until something else is to be said.
		text, level = m.opts.ReadOnlyNote, board.LevelWarn
	}
	plain := text == ""
	if plain {
		text = "select a process with ↑/↓ or " + m.keys.jumpLabel() + " · x crash · s stop · r restart"
	}
	symbol := map[board.Level]string{board.LevelGood: "✓ ", board.LevelBad: "✗ ", board.LevelWarn: "! ", board.LevelAction: "› "}[level]
	left := st.Level(level).Render(symbol + text)
	if plain {
		left = st.Muted.Render(text)
	}
	right := ""
	if compact && m.board.Has(board.Usage) {
		pv := m.board.Process(board.Usage)
		right = fmt.Sprintf("usage %s/%s", pv.Usage.Mode, pv.Usage.Reset)
		if pv.Usage.Command != "" {
			right = "usage: yours"
		}
		if n := len(m.board.UsageInstances()); n > 1 {
			right += fmt.Sprintf(" ×%d", n)
		}
		if pv.Armed != "" {
			right += " crash@" + pv.Armed
		}
		if note := lag.ShortNote(pv); note != "" {
			right += " · lag " + note
		}
		right = st.Muted.Render(right)
	}
	if m.sizeNote != "" {
		right = strings.TrimPrefix(right+" · "+st.Level(board.LevelWarn).Render("! "+m.sizeNote), " · ")
	}
	if right != "" {
		// A message that needs the whole line takes it: its end (an
		// offset, a cause) matters more than the reminder on the right.
		lw := w - lipgloss.Width(right) - 1
		if lw > 20 && (plain || lipgloss.Width(left) <= lw) {
			return common.Fit(left, lw) + " " + right
		}
	}
	return common.Fit(left, w)
}

func (m Model) tooSmall() string {
	st := m.styles
	lines := []string{
		st.App.Render("Kafka Recovery Lab"),
		"",
		"This terminal is too small for the dashboard.",
		fmt.Sprintf("It needs at least %d×%d; it is %d×%d.", MinWidth, MinHeight, m.width, m.height),
		"Enlarge the window or reduce the font size.",
	}
	if m.sizeNote != "" {
		lines = append(lines, m.sizeNote)
	}
	msg := lipgloss.JoinVertical(lipgloss.Center, append(lines, "", st.Muted.Render("q quits"))...)
	// Wrap to the width first so even a very narrow terminal gets the message.
	msg = st.NewStyle().Width(m.width).Align(lipgloss.Center).Render(msg)
	screen := common.Lines(common.Center(st.Renderer(), msg, m.width, m.height))
	return strings.Join(common.FitLines(screen, m.width, m.height), "\n")
}
