package board

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The kinds of cause (audit.CauseKind), in the order the why view takes
// them (groupCauses). docs/consumer-usage.md explains each.
const (
	CauseCountedAgain  = "counted-again"
	CauseStaleReading  = "stale-reading"
	CauseNeverRecorded = "never-recorded"
	// CauseDeletedUnread: never recorded, and deleted by retention while
	// consumer-usage's committed offset was before it (retention.go).
	CauseDeletedUnread = "deleted-by-retention"
)

var causeOrder = []string{CauseCountedAgain, CauseStaleReading, CauseNeverRecorded, CauseDeletedUnread}

// CauseGroup is the causes of one kind, in one partition, by one writer.
type CauseGroup struct {
	Kind      string
	Partition int32
	Writer    string // instance@start as the records name it ("" none)
	Messages  int
	Sensors   int
	Drift     Drift
	// FirstOffset and LastOffset bound the group's messages; BaseFrom and
	// BaseTo the readings their deltas were taken from (epoch ms, 0 unknown).
	FirstOffset, LastOffset int64
	BaseFrom, BaseTo        int64
	// Took: when the writer took the partition before writing these
	// (zero: unknown); TookBack: it had held the partition before, since
	// its start, so its reading was held across the reassignment.
	Took     time.Time
	TookBack bool
	// Inferred: its messages were matched to records that name none.
	Inferred bool
	// Skipped: why consumer-usage never read these never-recorded
	// messages when it jumped over them (ExpiredWhy, ResetWhy; "" when it
	// did not).
	Skipped string
}

func (g CauseGroup) key() string {
	return fmt.Sprintf("%s/%d/%s/%v/%s", g.Kind, g.Partition, g.Writer, g.Inferred, g.Skipped)
}

// ExpiredWhy is how a drift names the messages skipped after commits
// expired.
const ExpiredWhy = "never counted: commits expired while it was down"

// ResetWhy is how a drift names the messages an offset reset moved
// consumer-usage's position past.
const ResetWhy = "never counted: an offset reset moved its position past them"

// kindWords is the group's kind as the timeline says it.
func (g CauseGroup) kindWords() string {
	if g.Skipped != "" {
		return g.Skipped
	}
	return g.Kind
}

// WriterWords is the writer as the screen names it: "consumer-usage-2
// (started 13:10:20)".
func WriterWords(writer string) string {
	i := strings.LastIndexByte(writer, '@')
	if i < 0 {
		return writer
	}
	at, err := time.Parse(time.RFC3339Nano, writer[i+1:])
	if err != nil {
		return writer
	}
	return fmt.Sprintf("%s (started %s)", writer[:i], at.Local().Format("15:04:05"))
}

func clockMs(ms int64) string { return time.UnixMilli(ms).Local().Format("15:04:05") }

// Words is the group in one line, amount first: "+19.21 h +38.42 km: 5
// messages of p2 counted again by consumer-usage (started 13:09:00)".
func (g CauseGroup) Words() string {
	amount := fmt.Sprintf("%+.2f h %+.2f km", g.Drift.Hours(), g.Drift.Km())
	return amount + ": " + g.What()
}

// Short is the group in a few words, for the timeline: "+3.49 h +7.83
// km: 5 messages of p2 (offsets 80–84) stale-reading by consumer-usage
// (started 14:17:22)".
func (g CauseGroup) Short() string {
	s := fmt.Sprintf("%+.2f h %+.2f km: %s of p%d", g.Drift.Hours(), g.Drift.Km(), Plural(int64(g.Messages), "message"), g.Partition)
	if g.Messages > 1 {
		s += fmt.Sprintf(" (offsets %d–%d)", g.FirstOffset, g.LastOffset)
	} else {
		s += fmt.Sprintf(" (offset %d)", g.FirstOffset)
	}
	s += " " + g.kindWords()
	if g.Writer != "" {
		s += " by " + WriterWords(g.Writer)
	}
	if g.Inferred {
		s += " (inferred)"
	}
	return s
}

// What is the group without its amount, in full.
func (g CauseGroup) What() string {
	msgs := Plural(int64(g.Messages), "message") + " of p" + fmt.Sprint(g.Partition)
	if g.Messages > 1 {
		msgs += fmt.Sprintf(" (offsets %d–%d)", g.FirstOffset, g.LastOffset)
	} else {
		msgs += fmt.Sprintf(" (offset %d)", g.FirstOffset)
	}
	by := ""
	if g.Writer != "" {
		by = " by " + WriterWords(g.Writer)
	}
	if g.Inferred {
		msgs = "inferred from the deltas: " + msgs
	}
	switch g.Kind {
	case CauseCountedAgain:
		return msgs + " counted again" + by + ": delivered again and their deltas saved once more"
	case CauseStaleReading:
		base := ""
		switch {
		case g.BaseFrom == 0:
		case g.BaseFrom == g.BaseTo:
			base = " of " + clockMs(g.BaseFrom)
		default:
			base = " of " + clockMs(g.BaseFrom) + "–" + clockMs(g.BaseTo)
		}
		return msgs + " recorded" + by + g.staleWhy(base)
	case CauseNeverRecorded:
		switch g.Skipped {
		case ExpiredWhy:
			return msgs + " " + ExpiredWhy + " (its restart found no commits and auto.offset.reset latest started it at the end)"
		case ResetWhy:
			return msgs + " " + ResetWhy + " (OFFSET_OUT_OF_RANGE, e.g. a committed offset retention deleted, and auto.offset.reset's offset)"
		}
		return msgs + " never recorded: the topic yields a delta, no usage record has it"
	case CauseDeletedUnread:
		return msgs + " never counted: deleted by retention before consumer-usage read them " +
			"(its committed offset was before them: OFFSET_OUT_OF_RANGE, and it went on at auto.offset.reset's offset)"
	}
	return msgs + " " + g.Kind + by
}

// staleWhy says where a stale reading came from, as far as the board saw
// the writer's assignments; base is " of 13:10:25" or "".
func (g CauseGroup) staleWhy(base string) string {
	p := fmt.Sprintf("p%d", g.Partition)
	switch {
	case g.Took.IsZero():
		return " with a delta from a stale reading" + base +
			", not from the message before (a reading held across a reassignment, or loaded before another owner's last writes)"
	case g.TookBack:
		return " after it took " + p + " back at " + g.Took.Local().Format("15:04:05") + " holding its reading" + base +
			": their deltas were taken from that reading, not from the message before"
	}
	return " after it took " + p + " at " + g.Took.Local().Format("15:04:05") + " with the checkpoint it had loaded, a reading" + base +
		": their deltas were taken from that reading, not from the message before"
}

// take is one assignment of partitions to a consumer-usage instance.
type take struct {
	at    time.Time
	parts []int32
}

// maxTakes bounds the assignments kept per instance.
const maxTakes = 64

func (b *Board) noteTake(name string, at time.Time, parts []int32) {
	if b.takes == nil {
		b.takes = map[string][]take{}
	}
	ts := append(b.takes[name], take{at: at, parts: slices.Clone(parts)})
	if len(ts) > maxTakes {
		ts = ts[len(ts)-maxTakes:]
	}
	b.takes[name] = ts
}

// tookAt finds when writer ("instance@start") last took partition before
// the moment given, since its start, and whether it had taken it before.
func (b *Board) tookAt(writer string, partition int32, before time.Time) (at time.Time, back bool) {
	i := strings.LastIndexByte(writer, '@')
	if i < 0 {
		return time.Time{}, false
	}
	start, err := time.Parse(time.RFC3339Nano, writer[i+1:])
	if err != nil {
		return time.Time{}, false
	}
	for _, t := range b.takes[writer[:i]] {
		if t.at.Before(start) || t.at.After(before) || !slices.Contains(t.parts, partition) {
			continue
		}
		back = !at.IsZero()
		at = t.at
	}
	return at, back
}

// withTakes fills each stale-reading group's Took from the writers'
// assignments before the group was first seen.
func (b *Board) withTakes(groups []CauseGroup) []CauseGroup {
	for i, g := range groups {
		if g.Kind != CauseStaleReading || g.Writer == "" {
			continue
		}
		before, seen := b.causeGroups[g.key()]
		if !seen {
			before = b.now
		}
		groups[i].Took, groups[i].TookBack = b.tookAt(g.Writer, g.Partition, before)
	}
	return groups
}

// WhyView explains the drift of one sensor, or of the total.
type WhyView struct {
	SensorID string // "" for the total
	Drift    *Drift // nil without a comparison
	Verdict  Verdict
	Groups   []CauseGroup
	Messages int
	// Causes: one sensor's messages (nil for the total).
	Causes []Cause
	Err    error
}

// DriftingSensors lists the sensors whose drift has causes, sorted.
func (b *Board) DriftingSensors() []string {
	var out []string
	for _, r := range b.Usage().Rows {
		if len(r.Causes) > 0 {
			out = append(out, r.SensorID)
		}
	}
	return out
}

// Why groups the causes of sensor's drift ("" or "total": every sensor's).
func (b *Board) Why(sensor string) WhyView {
	u := b.Usage()
	v := WhyView{SensorID: sensor}
	rows := u.Rows
	if sensor == "" || sensor == "total" {
		v.SensorID = ""
		v.Drift, v.Verdict = u.Total.Drift, u.Total.Verdict
	} else {
		rows = nil
		for _, r := range u.Rows {
			if r.SensorID == sensor {
				rows = append(rows, r)
				v.Drift, v.Verdict, v.Causes = r.Drift, r.Verdict, r.Causes
			}
		}
	}
	var causes [][]Cause
	for _, r := range rows {
		if r.CausesErr != nil {
			v.Err = r.CausesErr
		}
		causes = append(causes, r.Causes)
		v.Messages += len(r.Causes)
	}
	v.Groups = b.withTakes(groupCauses(causes, b.skipWhy))
	return v
}

// groupCauses groups causes by kind, partition and writer (a
// never-recorded message apart by skipWhy's reason when consumer-usage
// jumped over it), ordered within a kind by partition, then by the largest
// drift, and the kinds taken in turn in causeOrder (kindsFirst).
func groupCauses(perSensor [][]Cause, skipWhy func(partition int32, offset int64) string) []CauseGroup {
	groups := map[string]*CauseGroup{}
	for _, cs := range perSensor {
		seen := map[string]bool{}
		for _, c := range cs {
			g := CauseGroup{Kind: c.Kind, Partition: c.Partition, Writer: c.Writer, Inferred: c.Inferred}
			if c.Kind == CauseNeverRecorded {
				g.Skipped = skipWhy(c.Partition, c.Offset)
			}
			k := g.key()
			have := groups[k]
			if have == nil {
				g.FirstOffset, g.LastOffset = c.Offset, c.Offset
				have = &g
				groups[k] = have
			}
			if !seen[k] {
				seen[k] = true
				have.Sensors++
			}
			have.Messages++
			d := c.Drift()
			have.Drift.HoursCents += d.HoursCents
			have.Drift.KmCents += d.KmCents
			have.FirstOffset, have.LastOffset = min(have.FirstOffset, c.Offset), max(have.LastOffset, c.Offset)
			if c.BaseTimestamp != 0 {
				if have.BaseFrom == 0 || c.BaseTimestamp < have.BaseFrom {
					have.BaseFrom = c.BaseTimestamp
				}
				have.BaseTo = max(have.BaseTo, c.BaseTimestamp)
			}
		}
	}
	out := make([]CauseGroup, 0, len(groups))
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, *groups[k])
	}
	rank := func(kind string) int {
		if i := slices.Index(causeOrder, kind); i >= 0 {
			return i
		}
		return len(causeOrder)
	}
	slices.SortStableFunc(out, func(a, b CauseGroup) int {
		if r := rank(a.Kind) - rank(b.Kind); r != 0 {
			return r
		}
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return int(abs(b.Drift.HoursCents) - abs(a.Drift.HoursCents))
	})
	return kindsFirst(out)
}

// kindsFirst orders groups so that the first group of every kind comes
// before the second of any: the why view is cut at the screen's height,
// and a kind below the fold is a cause the room never sees (a lesson that
// skips messages makes a stale-reading group per partition and a
// never-recorded one beside each). Within a kind the order stands.
func kindsFirst(groups []CauseGroup) []CauseGroup {
	var byKind [][]CauseGroup
	index := map[string]int{}
	for _, g := range groups {
		i, ok := index[g.Kind]
		if !ok {
			i = len(byKind)
			index[g.Kind] = i
			byKind = append(byKind, nil)
		}
		byKind[i] = append(byKind[i], g)
	}
	out := make([]CauseGroup, 0, len(groups))
	for round := 0; len(out) < len(groups); round++ {
		for _, gs := range byKind {
			if round < len(gs) {
				out = append(out, gs[round])
			}
		}
	}
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// noteCauseGroups puts a timeline line for every group of causes not
// seen before in this run.
func (b *Board) noteCauseGroups(at time.Time) {
	var all [][]Cause
	var err error
	for _, id := range slices.Sorted(maps.Keys(b.usage)) {
		all = append(all, b.usage[id].Causes)
		if e := b.usage[id].CausesErr; e != nil {
			err = e
		}
	}
	if err != nil && b.causesErr == nil {
		b.event(at, "", LevelWarn, "cannot name the drift's messages: "+err.Error())
	}
	b.causesErr = err
	for _, g := range groupCauses(all, b.skipWhy) {
		k := g.key()
		if _, seen := b.causeGroups[k]; seen {
			continue
		}
		if b.causeGroups == nil {
			b.causeGroups = map[string]time.Time{}
		}
		b.causeGroups[k] = at
		b.event(at, "", LevelWarn, "drift named: "+g.Short()+" · w says why")
	}
}
