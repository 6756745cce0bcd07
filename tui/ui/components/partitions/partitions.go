// Package partitions renders the topic's partitions: per partition its
// leader, replicas and in-sync replicas (the cluster's metadata), its high
// watermark, consumer-usage's committed offset and lag, and the sensors
// whose key the producer's partitioner sends there. An ISR smaller than
// the replicas is a warning, one below min.insync.replicas (acks=all
// writes refused) and a partition without a leader are bad; a sensor
// consumer-current read from another partition than computed is flagged.
package partitions

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the partitions of one PartitionsView.
type Panel struct {
	Styles *theme.Styles
	View   board.PartitionsView
}

// Lines is one line per partition, each exactly width cells, and what the
// cluster is ("one node (id 0), no replication" on the embedded broker),
// right-aligned on a partition's line when one has room, else on a line
// of its own. Before the first metadata read it is one line saying so.
func (p Panel) Lines(width int) []string { return p.lines(width, false) }

// noteGap is the least space between a partition's line and the note
// beside it.
const noteGap = 4

// lines is Lines; with wrap, a partition's line too long for width goes on
// below it (what moved in, what is read elsewhere) instead of being cut.
func (p Panel) lines(width int, wrap bool) []string {
	st, v := p.Styles, p.View
	if !v.Seen {
		return []string{common.Fit(" "+st.Muted.Render(p.waiting()), width)}
	}
	cols := p.columns()
	lines := make([]string, 0, len(v.Rows)+1)
	for _, row := range v.Rows {
		head, tail := p.rowParts(row, cols)
		if !wrap || common.Width(" "+head+tail) <= width {
			lines = append(lines, " "+head+tail)
			continue
		}
		lines = append(lines, " "+head)
		for _, l := range common.Wrap(strings.TrimLeft(tail, " "), width-rowIndent) {
			lines = append(lines, strings.Repeat(" ", rowIndent)+l)
		}
	}
	// The note goes on the shortest line that has room for it, its end
	// under the end of the widest line (or a short gap after its own line
	// when that reaches further), so that it reads with the partitions
	// rather than at the far edge of a wide screen; else on a line of its own.
	if note := p.note(); note != "" {
		best, widest := -1, 0
		for i, l := range lines {
			widest = max(widest, common.Width(l))
			if width-common.Width(l)-common.Width(note)-1 >= 2 && (best < 0 || common.Width(l) < common.Width(lines[best])) {
				best = i
			}
		}
		if best >= 0 {
			end := max(widest, common.Width(lines[best])+noteGap+common.Width(note))
			end = min(end, width-1)
			lines[best] += strings.Repeat(" ", end-common.Width(lines[best])-common.Width(note)) + note
		} else {
			lines = append(lines, " "+note)
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = common.Fit(l, width)
	}
	return out
}

// Summary is every partition on one line, for a screen with no room for
// Lines: "partitions p0 leader 1 isr [1 2 3] · p1 …".
func (p Panel) Summary(width int) string {
	st, v := p.Styles, p.View
	if !v.Seen {
		return common.Fit(" "+st.Muted.Render(p.waiting()), width)
	}
	parts := make([]string, 0, len(v.Rows))
	for _, row := range v.Rows {
		parts = append(parts, fmt.Sprintf("p%d %s isr %s", row.Partition, p.leader(row), p.isr(row)))
	}
	s := " " + st.Muted.Render(v.Topic+" ") + strings.Join(parts, st.Muted.Render(" · "))
	if n := movedSensors(v.Keys.Moved); n > 0 {
		s += st.Muted.Render(" · ") + st.Warn.Render(fmt.Sprintf("%d keys moved (t)", n))
	}
	if note := p.note(); note != "" && common.Width(s)+common.Width(note)+3 <= width {
		s += st.Muted.Render(" · ") + note
	}
	return common.Fit(s, width)
}

func (p Panel) waiting() string {
	if p.View.Err != nil {
		return fmt.Sprintf("partitions of %s: cannot read them (%v)", p.View.Topic, p.View.Err)
	}
	return fmt.Sprintf("partitions of %s: reading the metadata…", p.View.Topic)
}

// note says what the cluster is and whether the figures are old.
func (p Panel) note() string {
	st, v := p.Styles, p.View
	var parts []string
	if v.Stale {
		parts = append(parts, st.Warn.Render("stale"))
	}
	if v.OffsetsStale {
		parts = append(parts, st.Warn.Render("hw stale: the latest read failed"))
	}
	switch {
	case v.SingleNode && len(v.Nodes) == 1:
		parts = append(parts, st.Muted.Render(fmt.Sprintf("one node (id %d), no replication", v.Nodes[0])))
	case v.MinISR > 0:
		parts = append(parts, st.Muted.Render(fmt.Sprintf("%d nodes · min.insync.replicas %d", len(v.Nodes), v.MinISR)))
	}
	return strings.Join(parts, st.Muted.Render(" · "))
}

// columns are the widths of the aligned parts.
type columns struct{ leader, replicas, isr, start, hw, committed int }

func (p Panel) columns() columns {
	var c columns
	for _, row := range p.View.Rows {
		c.leader = max(c.leader, len(leaderText(row)))
		c.replicas = max(c.replicas, len(board.NodeList(row.Replicas)))
		c.isr = max(c.isr, len(board.NodeList(row.ISR)))
		c.hw = max(c.hw, len(hwText(row)))
		c.start = max(c.start, len(startText(row)))
		c.committed = max(c.committed, len(committedText(row)))
	}
	return c
}

func leaderText(row board.PartitionRow) string {
	switch {
	case row.Leaderless:
		return "none"
	case row.LeaderDown:
		// Until the controller fences it, the metadata names a dead leader.
		return fmt.Sprintf("%d (down)", row.Leader)
	}
	return fmt.Sprint(row.Leader)
}

func hwText(row board.PartitionRow) string {
	if row.HighWatermark < 0 {
		return "—"
	}
	return common.Count(row.HighWatermark)
}

// startText is the partition's log start offset ("—" unknown).
func startText(row board.PartitionRow) string {
	if row.LogStart < 0 {
		return "—"
	}
	return common.Count(row.LogStart)
}

// showsStart: the rows carry the log start, once retention matters (the
// lab set one, or a partition's oldest records are gone); before, it is 0
// everywhere and says nothing.
func (p Panel) showsStart() bool { return p.View.Retention > 0 || p.View.Trimmed }

func committedText(row board.PartitionRow) string {
	switch {
	case row.CommittedUnknown:
		return "—"
	case row.Committed < 0:
		return "no commit"
	case row.Lag >= 0:
		return common.Count(row.Committed) + " lag " + common.Count(row.Lag)
	}
	return common.Count(row.Committed)
}

func pad(s string, visible, width int) string {
	if visible < width {
		return s + strings.Repeat(" ", width-visible)
	}
	return s
}

func (p Panel) leader(row board.PartitionRow) string {
	t := leaderText(row)
	if row.Leaderless || row.LeaderDown {
		return "leader " + p.Styles.Bad.Render(t)
	}
	return "leader " + t
}

func (p Panel) isr(row board.PartitionRow) string {
	t := board.NodeList(row.ISR)
	switch {
	case row.BelowMinISR:
		return p.Styles.Bad.Render(t)
	case row.UnderReplicated:
		return p.Styles.Warn.Render(t)
	}
	return t
}

// rowIndent is where a partition line's continuation starts: under its
// leader, clear of the partition's name.
const rowIndent = 5

// rowParts is a partition's line: its columns and sensors (head), then
// what moved in and what is read elsewhere (tail, "" when nothing).
func (p Panel) rowParts(row board.PartitionRow, c columns) (head, tail string) {
	st := p.Styles
	muted := st.Muted.Render
	var b strings.Builder
	b.WriteString(st.Title.Render(fmt.Sprintf("p%d", row.Partition)) + "  ")
	b.WriteString(pad(p.leader(row), 7+len(leaderText(row)), 7+c.leader) + "  ")
	reps := board.NodeList(row.Replicas)
	b.WriteString(muted("replicas ") + pad(reps, len(reps), c.replicas) + "  ")
	isr := board.NodeList(row.ISR)
	b.WriteString(muted("isr ") + pad(p.isr(row), len(isr), c.isr) + "  ")
	hw := hwText(row)
	hwShown := hw
	if p.View.OffsetsStale {
		// The last watermarks read, and the lags from them, until a read
		// succeeds again: said, not passed off as current.
		hwShown = st.Warn.Render(hw)
	}
	if p.showsStart() {
		s := startText(row)
		b.WriteString(muted("start ") + strings.Repeat(" ", c.start-len(s)) + s + "  ")
	}
	b.WriteString(muted("hw ") + strings.Repeat(" ", c.hw-len(hw)) + hwShown + "  ")
	ct := committedText(row)
	b.WriteString(muted("committed ") + pad(ct, len(ct), c.committed) + "  ")
	b.WriteString(muted("sensors ") + shortIDs(row.Sensors))
	tail = p.movedIn(row)
	if len(row.Misplaced) > 0 {
		tail += "  " + st.Bad.Render("read elsewhere: "+shortIDs(row.Misplaced))
	}
	return b.String(), tail
}

// shortIDs is "01 04 07": sensor ids without their common "sensor-"
// prefix; "none" for none.
func shortIDs(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.TrimPrefix(id, "sensor-")
	}
	return strings.Join(out, " ")
}

// Detail is the partitions view (the t key): Lines (wrapped, never cut),
// then per partition its latest leader change, whether acks=all writes are
// taken, whether the audit found every key in its partition and in order,
// and what the columns mean. Each line is exactly width cells; all of
// them, however many: the view scrolls what does not fit.
func (p Panel) Detail(width int) []string {
	st, v := p.Styles, p.View
	lines := p.lines(width, true)
	if !v.Seen {
		return lines
	}
	muted := st.Muted.Render
	var more []string
	add := func(s string) { more = append(more, common.Fit(" "+s, width)) }
	// A section is a label column and its lines, wrapped before styling so
	// no line carries half an escape sequence.
	const labelW = 9
	section := func(label string, body []styledLine) {
		first := true
		for _, b := range body {
			for _, l := range common.Wrap(b.text, width-1-labelW) {
				lead := strings.Repeat(" ", labelW)
				if first {
					lead, first = st.Title.Render(label)+strings.Repeat(" ", labelW-len(label)), false
				}
				add(lead + b.style(l))
			}
		}
	}
	plain := func(s ...string) string { return strings.Join(s, " ") }
	add("")
	// Lost writes are the news: first, so a short screen keeps them.
	lost := len(v.Acked.Missing) > 0
	if lost {
		section("Acked", p.acked())
	}
	// Keys that moved are the news when there are any: first.
	if moved := p.moved(); len(moved) > 0 {
		section("Moved", moved)
	}
	var leaders []styledLine
	if v.SingleNode {
		leaders = append(leaders, styledLine{"one node leads every partition: nothing to elect, nothing replicated", muted})
	} else {
		for _, row := range v.Rows {
			text, moved := p.lastMove(row)
			style := muted
			if moved {
				style = plain
			}
			leaders = append(leaders, styledLine{fmt.Sprintf("p%d %s", row.Partition, text), style})
		}
	}
	section("Leaders", leaders)
	if v.MinISR > 0 {
		section("Writes", p.writes())
	}
	section("Keys", p.keys())
	if !lost {
		section("Acked", p.acked())
	}
	add("")
	group := v.Group
	if group == "" {
		group = "consumer-usage's group"
	}
	for _, s := range []string{
		fmt.Sprintf("sensors: the keys the producer's partitioner (CRC-32 of the key mod %d) sends to the partition", len(v.Rows)),
		"hw: the high watermark, the offset the next record gets · committed: " + group + "'s committed offset",
		retentionLine(v),
		"isr: the replicas in sync with the leader; yellow when fewer than the replicas, red below min.insync.replicas",
		"keys: the audit reads the whole topic and finds each sensor's records and their order",
		"acked: each write the producer was told succeeded, looked for in the topic by sensor and timestamp (a new leader reuses lost offsets)",
	} {
		if s == "" {
			continue
		}
		for _, l := range common.Wrap(s, width-1) {
			add(muted(l))
		}
	}
	return append(lines, more...)
}

// lastMove is a partition's latest leader change seen in this run, and
// whether there was one.
func (p Panel) lastMove(row board.PartitionRow) (string, bool) {
	m := row.LastMove
	if m == nil {
		return fmt.Sprintf("leader %s, no change seen in this run", leaderText(row)), false
	}
	s := fmt.Sprintf("leader %d → %d at %s", m.From, m.To, m.At.Format("15:04:05"))
	switch {
	case m.After > 0:
		s += fmt.Sprintf(", %.1f s after broker-%d exited", m.After.Seconds(), m.From)
	case m.Preferred:
		s += ", back to its preferred leader"
	}
	return s, true
}

type styledLine struct {
	text  string
	style func(...string) string
}

// keys says whether the audit found every sensor's records in the
// partition its key hashes to, and in order.
func (p Panel) keys() []styledLine {
	st, k := p.Styles, p.View.Keys
	if !k.Seen {
		return []styledLine{{"the audit has not read the topic yet", st.Muted.Render}}
	}
	var out []styledLine
	if len(k.Scattered) > 0 {
		out = append(out, styledLine{"records in another partition than their key's: " + strings.Join(k.Scattered, "; "), st.Bad.Render})
	}
	if k.Disordered > 0 {
		out = append(out, styledLine{fmt.Sprintf("%s of %s records out of order for their key (%s)",
			common.Count(k.Disordered), common.Count(k.Records), shortIDs(k.DisorderedKeys)), st.Bad.Render})
	}
	switch {
	case len(out) > 0:
	case k.Records == 0:
		out = append(out, styledLine{"the audit has read no valid record yet", st.Muted.Render})
	case len(k.Moved) > 0 || len(k.Moving) > 0:
		out = append(out, styledLine{fmt.Sprintf("%d sensors, each in its key's partition (%d since it moved there, below), each partition in order: %s records read, 0 out of order",
			k.Keys, movedSensors(k.Moved), common.Count(k.Records)), st.Good.Render})
	default:
		out = append(out, styledLine{fmt.Sprintf("%d sensors, each in its key's partition, in order: %s records read, 0 out of order",
			k.Keys, common.Count(k.Records)), st.Good.Render})
	}
	return out
}

// acked says what became of the writes the producer was told succeeded:
// lost ones by partition and offset, else how many are all in the topic.
func (p Panel) acked() []styledLine {
	st, a := p.Styles, p.View.Acked
	setting := "acks=" + a.Setting
	if a.Running != "" {
		setting = "acks=" + a.Running
	}
	var out []styledLine
	if a.Err != nil {
		out = append(out, styledLine{fmt.Sprintf("cannot read the producer's log: %v", a.Err), st.Warn.Render})
	}
	pending := ""
	if n := a.Pending - a.PendingUnplaced; n > 0 {
		pending = fmt.Sprintf(", %s at offsets not read yet", common.Count(n))
	}
	if a.PendingUnplaced > 0 {
		pending += fmt.Sprintf(", %s sent with acks=0 not found yet (nothing sent after them read)", common.Count(a.PendingUnplaced))
	}
	var placed, unplaced []board.LostWrite
	for _, w := range a.Missing {
		if w.Placed() {
			placed = append(placed, w)
		} else {
			unplaced = append(unplaced, w)
		}
	}
	confirmed := a.Acknowledged - a.Unconfirmed
	switch {
	case !a.Seen:
		out = append(out, styledLine{setting + ": the producer's log of acknowledged writes not read yet", st.Muted.Render})
	case len(a.Missing) > 0:
		if len(placed) > 0 {
			out = append(out, styledLine{fmt.Sprintf("%s lost of %s acknowledged: %s; the topic holds other records there%s",
				board.Plural(int64(len(placed)), "write"), common.Count(confirmed), board.LostRanges(placed), pending), st.Bad.Render})
			pending = ""
		}
		if len(unplaced) > 0 {
			out = append(out, styledLine{fmt.Sprintf("%s lost of %s sent with acks=0, %s: not in the topic; the producer counted them as sent%s",
				board.Plural(int64(len(unplaced)), "record"), common.Count(a.Unconfirmed), board.UnplacedCounts(unplaced), pending), st.Bad.Render})
		}
		out = append(out, styledLine{"the producer writes with " + setting + " now", st.Muted.Render})
	case a.Acknowledged == 0:
		out = append(out, styledLine{setting + ": no write acknowledged yet", st.Muted.Render})
	case a.Unconfirmed == 0:
		out = append(out, styledLine{fmt.Sprintf("%s: %s acknowledged writes, every one read is in the topic%s",
			setting, common.Count(a.Acknowledged), pending), st.Good.Render})
	default:
		out = append(out, styledLine{fmt.Sprintf("%s: %s acknowledged writes and %s sent with acks=0 (never confirmed), every one settled is in the topic%s",
			setting, common.Count(confirmed), common.Count(a.Unconfirmed), pending), st.Good.Render})
	}
	if a.LogFailing != "" {
		out = append(out, styledLine{a.LogFailing + ": the acknowledged writes since are not checked yet", st.Bad.Render})
	}
	for _, g := range a.Gaps {
		out = append(out, styledLine{fmt.Sprintf("%s not in the producer's log (%s–%s, %s): not checked",
			board.Plural(g.Count, "acknowledged write"), g.From.Local().Format("15:04:05"), g.To.Local().Format("15:04:05"), g.Err), st.Warn.Render})
	}
	return out
}

func movedSensors(moves []board.KeyMove) int {
	seen := map[string]bool{}
	for _, m := range moves {
		seen[m.Sensor] = true
	}
	return len(seen)
}

// movedIn is a row's sensors that moved into its partition, with where
// they came from: "  moved in 01←p2 03←p1".
func (p Panel) movedIn(row board.PartitionRow) string {
	var in []string
	for _, m := range p.View.Keys.Moved {
		if m.To == row.Partition {
			in = append(in, fmt.Sprintf("%s←p%d", strings.TrimPrefix(m.Sensor, "sensor-"), m.From))
		}
	}
	if len(in) == 0 {
		return ""
	}
	return "  " + p.Styles.Warn.Render("moved in "+strings.Join(in, " "))
}

// moved says when partitions were added and who used them how soon, then
// every key that moved: from which partition to which, from which offset.
func (p Panel) moved() []styledLine {
	st, v := p.Styles, p.View
	var out []styledLine
	if g := v.Growth; g != nil {
		text := fmt.Sprintf("partitions %d → %d at %s (CRC-32 of the key mod %d sends %d sensors elsewhere):", g.From, g.To,
			g.At.Format("15:04:05"), g.To, len(g.Planned))
		text += " producer " + seen(g.At, g.ProducerAt)
		for _, name := range []string{board.Current, board.Usage} {
			if at, ok := g.Assigned[name]; ok {
				text += ", " + name + " " + seen(g.At, at)
			}
		}
		text += ", audit " + seen(g.At, g.AuditAt)
		out = append(out, styledLine{text, st.Muted.Render})
	}
	if len(v.Keys.Moved) > 0 {
		moves := make([]string, len(v.Keys.Moved))
		for i, m := range v.Keys.Moved {
			moves[i] = fmt.Sprintf("%s p%d→p%d from offset %s", strings.TrimPrefix(m.Sensor, "sensor-"), m.From, m.To, common.Count(m.FirstOffset))
		}
		out = append(out, styledLine{"sensors " + strings.Join(moves, " · "), st.Warn.Render})
	}
	if len(v.Keys.Moving) > 0 {
		out = append(out, styledLine{"moving, not read in their new partition yet: " + shortIDs(v.Keys.Moving), st.Muted.Render})
	}
	if len(out) > 0 {
		out = append(out, styledLine{"a consumer reading a moved key's partitions side by side can get its newer records before its older ones", st.Muted.Render})
	}
	return out
}

// seen is "after 0.8 s" from at to then ("not yet" when then is zero).
func seen(at, then time.Time) string {
	if then.IsZero() {
		return "not yet"
	}
	return fmt.Sprintf("after %.1f s", max(then.Sub(at), 0).Seconds())
}

// writes says whether acks=all writes are taken, partition by partition:
// refused below min.insync.replicas, waiting while a leader is down or
// missing, else taken.
func (p Panel) writes() []styledLine {
	st, v := p.Styles, p.View
	var refused, waiting []string
	for _, row := range v.Rows {
		switch {
		case row.Leaderless:
			waiting = append(waiting, fmt.Sprintf("p%d (no leader)", row.Partition))
		case row.LeaderDown:
			waiting = append(waiting, fmt.Sprintf("p%d (leader %d down)", row.Partition, row.Leader))
		case row.BelowMinISR:
			refused = append(refused, fmt.Sprintf("p%d", row.Partition))
		}
	}
	var out []styledLine
	writes := "acks=all writes"
	acks := v.Acked.Running
	if acks == "" {
		acks = v.Acked.Setting
	}
	switch acks {
	case "1":
		out = append(out, styledLine{"the producer writes with acks=1: each leader confirms alone, whatever its ISR; a write confirmed before a follower copied it dies with the leader",
			st.Warn.Render})
		writes, refused = "acks=1 writes", nil
	case "0":
		out = append(out, styledLine{"the producer writes with acks=0: no broker confirms anything, whatever its ISR; a record a leader never stored is lost, and the producer counts it as sent",
			st.Warn.Render})
		writes, refused = "acks=0 writes", nil
	}
	if len(waiting) > 0 {
		out = append(out, styledLine{fmt.Sprintf("%s to %s wait for the controller to elect a leader from the ISR; the producer holds them meanwhile",
			writes, strings.Join(waiting, ", ")), st.Warn.Render})
	}
	if len(refused) > 0 {
		out = append(out, styledLine{fmt.Sprintf("acks=all refused on %s: ISR below min.insync.replicas %d (NOT_ENOUGH_REPLICAS); the producer holds its records until the ISR grows back",
			strings.Join(refused, " "), v.MinISR), st.Bad.Render})
	}
	if len(out) == 0 {
		out = append(out, styledLine{fmt.Sprintf("acks=all taken on every partition: each has a leader and at least min.insync.replicas %d in sync", v.MinISR),
			func(s ...string) string { return strings.Join(s, " ") }})
	}
	return out
}

// retentionLine says what the start column is and what deletes ("" when
// the rows do not show it).
func retentionLine(v board.PartitionsView) string {
	switch {
	case v.Retention > 0:
		return fmt.Sprintf("start: the log start, the first offset still in the log; retention %s deletes older records, and a consumer whose position is before it jumps (auto.offset.reset)", v.Retention)
	case v.Trimmed:
		return "start: the log start, the first offset still in the log; the offsets before it were deleted"
	}
	return ""
}
