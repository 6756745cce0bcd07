package board

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Rebuild: consumer-current rebuilds its state with Strategy from its next
// start (the dashboard's --rebuild, the rebuild key, a script's rebuild).
type Rebuild struct {
	At       time.Time
	Strategy string
}

// maxRebuilds bounds the starts the board remembers (the report's
// rebuilds, the cost chart).
const maxRebuilds = 100

// RebuildRun is one start of consumer-current: how it rebuilt its state,
// and what that cost once it caught up.
type RebuildRun struct {
	// Strategy is the one it started with; FellBack why it read the whole
	// topic instead ("" when it did not).
	Strategy string
	FellBack string
	// SnapshotAt: when the snapshot it loaded was written; ChangelogRead:
	// the changelog records it read, ChangelogMarks of them the marks (the
	// rest are sensors' values); Sensors: the sensor states restored.
	SnapshotAt     time.Time
	ChangelogRead  int64
	ChangelogMarks int64
	Sensors        int
	// Done: it caught up, after reading TopicRead records of the topic,
	// Millis after its start; History: the records of the topic below
	// where it caught up (what a replay reads).
	Done      bool
	TopicRead int64
	Millis    int64
	History   int64
}

// Method is how it really rebuilt: its strategy, or replay when it fell
// back.
func (r RebuildRun) Method() string {
	if r.FellBack != "" {
		return string(lesson.Replay)
	}
	return r.Strategy
}

// RecordsRead is every record the rebuild read: the changelog's, then the
// topic's.
func (r RebuildRun) RecordsRead() int64 { return r.ChangelogRead + r.TopicRead }

// Source is what the rebuild started from, in words, its snapshot's time
// in loc: "snapshot of 03:12:04", "changelog of 11 records", "replay",
// "replay (no snapshot written yet)".
func (r RebuildRun) Source(loc *time.Location) string {
	switch {
	case r.FellBack != "":
		return "replay (" + r.FellBack + ")"
	case r.Strategy == string(lesson.Snapshot):
		return "snapshot of " + r.SnapshotAt.In(loc).Format("15:04:05")
	case r.Strategy == string(lesson.Changelog):
		return "changelog of " + changelogRecords(r.ChangelogRead, r.ChangelogMarks)
	}
	return string(lesson.Replay)
}

// changelogRecords names a changelog's records and what they are: "12
// records (10 values, 2 marks)"; a mark is the offsets the values before
// it cover, one a publication.
func changelogRecords(n, marks int64) string {
	if marks <= 0 {
		return Plural(n, "record")
	}
	return fmt.Sprintf("%s (%s, %s)", Plural(n, "record"), Plural(n-marks, "value"), Plural(marks, "mark"))
}

// Text is the rebuild and its cost: "snapshot of 03:12:04 + 212
// messages, 41 ms", "replay of 1,000,000 messages, 3.4 s"; without the
// cost before it caught up.
func (r RebuildRun) Text(loc *time.Location) string {
	src := r.Source(loc)
	if !r.Done {
		return src
	}
	joint := " + "
	if r.Method() == string(lesson.Replay) {
		joint = " of "
	}
	return src + joint + Count(r.TopicRead) + " " + plural(r.TopicRead, "message") + ", " + Millis(r.Millis)
}

// Short is Text in fewer cells, for a narrow panel: "snap 03:12:04 +
// 212 msgs, 41 ms", "chlog 11 rec + 212 msgs, 63 ms", "replay 1,000,000
// msgs, 3.4 s" (a replay it fell back to says so: "fell back, replay …").
func (r RebuildRun) Short(loc *time.Location) string {
	src := "replay"
	switch {
	case r.FellBack != "":
		src = "fell back, replay"
	case r.Strategy == string(lesson.Snapshot):
		src = "snap " + r.SnapshotAt.In(loc).Format("15:04:05")
	case r.Strategy == string(lesson.Changelog):
		src = fmt.Sprintf("chlog %d rec", r.ChangelogRead)
	}
	if !r.Done {
		return "from " + src
	}
	joint := " + "
	if r.Method() == string(lesson.Replay) {
		joint = " "
	}
	return src + joint + Count(r.TopicRead) + " msgs, " + Millis(r.Millis)
}

// Millis is a duration in ms as short words: "41 ms", "3.4 s".
func Millis(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

func plural(n int64, what string) string {
	if n == 1 {
		return what
	}
	return what + "s"
}

// Rebuild is how consumer-current rebuilds from its next start.
func (b *Board) Rebuild() string { return b.rebuild }

// Rebuilds is every start of consumer-current the board saw announce its
// rebuild, oldest first (at most maxRebuilds).
func (b *Board) Rebuilds() []RebuildRun { return append([]RebuildRun(nil), b.rebuilds...) }

func (b *Board) setRebuild(v Rebuild) {
	if v.Strategy == "" || v.Strategy == b.rebuild {
		return
	}
	b.rebuild = v.Strategy
	at := v.At
	if at.IsZero() {
		at = b.now
	}
	text := "from its next start: rebuild by " + rebuildWords[v.Strategy]
	if p := b.procs[Current]; p != nil && p.alive() {
		text += " (r restarts it)"
	}
	b.event(at, Current, LevelAction, text)
}

// rebuildWords say each strategy after "rebuild by".
var rebuildWords = map[string]string{
	string(lesson.Replay):    "replaying the topic from earliest",
	string(lesson.Snapshot):  "loading its snapshot, then reading what follows it",
	string(lesson.Changelog): "reading its changelog, then what follows it in the topic",
}

// prepareWords say what the running process keeps up for each strategy.
var prepareWords = map[string]string{
	string(lesson.Replay):    "keeps nothing for its next start: a replay needs only the topic",
	string(lesson.Snapshot):  "keeps a snapshot for its next start: written every 5 s and at a graceful stop",
	string(lesson.Changelog): "publishes each sensor's latest state to its compacted changelog for its next start",
}

func (b *Board) onPrepares(s statusEvent) {
	f, e := s.p.current, s.e
	if f == nil {
		return
	}
	was := f.prepares
	f.prepares, f.prepared = e.Strategy, ""
	if e.Strategy != string(lesson.Replay) || (was != "" && was != e.Strategy) {
		b.say(s, LevelInfo, prepareWords[e.Strategy])
	}
}

func (b *Board) onPrepared(s statusEvent) {
	f, e := s.p.current, s.e
	if f == nil {
		return
	}
	f.prepared = e.Strategy
	switch e.Strategy {
	case string(lesson.Snapshot):
		b.say(s, LevelInfo, fmt.Sprintf("wrote a snapshot (%s) for its next start", Plural(int64(e.Sensors), "sensor")))
	case string(lesson.Changelog):
		b.say(s, LevelInfo, fmt.Sprintf("published its changelog for its next start: %s, %s",
			changelogRecords(e.Count, min(e.Count, 1)), Plural(int64(e.Sensors), "sensor")))
	}
}

func (b *Board) onRebuild(s statusEvent) {
	f, e := s.p.current, s.e
	if f == nil {
		return
	}
	run := RebuildRun{Strategy: e.Strategy, FellBack: e.Reason, SnapshotAt: e.SnapshotAt,
		ChangelogRead: e.Count, ChangelogMarks: e.Marks, Sensors: e.Sensors}
	if len(b.rebuilds) == maxRebuilds {
		b.rebuilds = append(b.rebuilds[:0:0], b.rebuilds[1:]...)
		if f.rebuildAt > 0 {
			f.rebuildAt--
		}
	}
	b.rebuilds = append(b.rebuilds, run)
	f.rebuildAt = len(b.rebuilds)
	from := offsetsWords(e)
	switch {
	case e.Reason != "":
		b.say(s, LevelWarn, fmt.Sprintf("cannot rebuild from its %s (%s): replays the topic from earliest", e.Strategy, e.Reason))
	case e.Strategy == string(lesson.Snapshot):
		b.say(s, LevelInfo, fmt.Sprintf("rebuilds from the %s (%s), reading on from %s",
			run.Source(b.loc()), Plural(int64(e.Sensors), "sensor"), from))
	case e.Strategy == string(lesson.Changelog):
		b.say(s, LevelInfo, fmt.Sprintf("rebuilds from its %s (%s), reading on from %s",
			run.Source(b.loc()), Plural(int64(e.Sensors), "sensor"), from))
	}
}

// caughtUpRebuild completes the incarnation's rebuild; its text, "" when
// the incarnation announced none.
func (b *Board) caughtUpRebuild(p *proc, processed, millis, history int64) string {
	f := p.current
	if f == nil || f.rebuildAt == 0 || f.rebuildAt > len(b.rebuilds) {
		return ""
	}
	r := &b.rebuilds[f.rebuildAt-1]
	if r.Done {
		return ""
	}
	r.Done, r.TopicRead, r.Millis, r.History = true, processed, millis, history
	return r.Text(b.loc())
}

// currentRebuild is the running (or latest) incarnation's rebuild; nil
// before any.
func (b *Board) currentRebuild(p *proc) *RebuildRun {
	f := p.current
	if f == nil || f.rebuildAt == 0 || f.rebuildAt > len(b.rebuilds) {
		return nil
	}
	r := b.rebuilds[f.rebuildAt-1]
	return &r
}

// loc is where the board's clock is: times it shows are in it.
func (b *Board) loc() *time.Location {
	if b.now.IsZero() {
		return time.UTC
	}
	return b.now.Location()
}

// offsetsWords is "offsets 0:10000 1:40000 2:50000" of a Rebuild event.
func offsetsWords(e status.Event) string {
	parts := make([]string, len(e.Positions))
	for i, p := range e.Positions {
		parts[i] = fmt.Sprintf("%d:%d", p.Partition, p.Offset)
	}
	return "offsets " + strings.Join(parts, " ")
}

// CostView is what consumer-current's rebuilds cost against the history
// they faced: the rebuild-cost chart and its figures.
type CostView struct {
	// Points are every rebuild that caught up with a history to read,
	// oldest first.
	Points []RebuildRun
	// Rows: one per history measured (ascending; rebuilds within 2% of a
	// row's history count as its), each method's latest rebuild at it.
	Rows []CostRow
}

// CostRow is one history's figures.
type CostRow struct {
	History  int64
	ByMethod map[string]RebuildRun
}

// costRowSpan: histories this close count as one row (the producer
// publishes between two measurements at one size).
const costRowSpan = 1.02

// Cost is the rebuilds' cost view.
func (b *Board) Cost() CostView { return CostOf(b.rebuilds) }

// CostOf is the cost view of runs, oldest first.
func CostOf(runs []RebuildRun) CostView {
	var v CostView
	for _, r := range runs {
		if r.Done && r.History > 0 {
			v.Points = append(v.Points, r)
		}
	}
	order := make([]int, len(v.Points)) // indexes into Points, by history
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return v.Points[order[i]].History < v.Points[order[j]].History })
	latest := []map[string]int{} // per row, per method: the latest point's index
	for _, i := range order {
		r := v.Points[i]
		n := len(v.Rows)
		if n == 0 || float64(r.History) > float64(v.Rows[n-1].History)*costRowSpan {
			v.Rows = append(v.Rows, CostRow{History: r.History, ByMethod: map[string]RebuildRun{}})
			latest = append(latest, map[string]int{})
			n++
		}
		if j, ok := latest[n-1][r.Method()]; !ok || i > j {
			latest[n-1][r.Method()] = i
			v.Rows[n-1].ByMethod[r.Method()] = r
		}
	}
	return v
}
