package board

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// AcksSetting: the producer's acks setting from now on (the a key, a
// script's acks): a running producer switches at once (its AcksSet status
// confirms it), a stopped one starts with it.
type AcksSetting struct {
	At   time.Time
	Acks string // "all", "1" or "0"
	// Err: the running producer did not switch (Acks is then the setting
	// it keeps).
	Err error
}

// AckedCheck: one comparison of what the producer acknowledged (its log
// of acknowledged records, acked.ndjson) with what the topic holds, by
// content: a record counts as held when the topic has a record of its key
// with its payload timestamp. A new leader elected without an
// acknowledged record gives its offset to another record, so the offset
// alone proves nothing.
type AckedCheck struct {
	At time.Time
	// Acknowledged: the records the log lists so far; Pending: of them,
	// those not settled yet (neither held nor missing yet): at offsets
	// the audit has not read, or sent with acks=0 and not found with no
	// record sent after them found.
	Acknowledged, Pending int64
	// Unconfirmed: of Acknowledged, the records sent with acks=0, which
	// the broker never confirmed (no offset); PendingUnplaced: of Pending,
	// those.
	Unconfirmed, PendingUnplaced int64
	// Missing: acknowledged records the topic does not hold, as far as
	// the audit has read, by partition then offset (those sent with
	// acks=0, with no offset, first).
	Missing []LostWrite
	// Latest: per partition, the latest record acknowledged (the last
	// line of the log for it); EarlierRound: the last one acknowledged
	// before Latest's round (an earlier payload timestamp).
	Latest, EarlierRound map[int32]AckedRecord
	// Unchecked: of Acknowledged, the records the log could not list, in
	// Gaps (in the log's order); Missing says nothing about them.
	Unchecked int64
	Gaps      []AckedGap
	// Err: the log could not be read (its lines are then not counted).
	Err error
}

// AckedRecord is one record the producer acknowledged: where the broker
// said it stored it, its key, the message's own timestamp (epoch ms) and
// the acks setting it was produced with. One sent with acks=0 has no
// offset: Offset is negative.
type AckedRecord struct {
	Partition int32
	Offset    int64
	Sensor    string
	Timestamp int64
	Acks      string
}

// Placed reports whether the broker said where it stored r (every acks
// setting but 0).
func (r AckedRecord) Placed() bool { return r.Offset >= 0 }

// LostWrite is an acknowledged record the topic does not hold.
type LostWrite = AckedRecord

// acksState is what the board keeps of the producer's acks.
type acksState struct {
	// setting: how the producer is (re)started from now on; running: what
	// the running producer said it uses ("" before it said).
	setting, running string
	check            AckedCheck
	seen             bool
	// lostSaid: the lost writes the timeline has named; gapsSaid: the
	// gaps it has named.
	lostSaid map[AckedRecord]bool
	gapsSaid int
	// logFailing: the producer's log fails since it said so (its error),
	// no marker read since: the acks from then on are not listed yet.
	logFailing string
	// waiting: the producer's latest progress report on the records
	// waiting for their acknowledgement.
	waiting waitingReport
}

// waitingReport is a producer progress report's records waiting for an
// acknowledgement (count 0: none), and for how long none came.
type waitingReport struct {
	at    time.Time
	pid   int
	count int64
	since time.Duration
}

func (b *Board) producerWaiting(s statusEvent) {
	b.acks.waiting = waitingReport{at: s.at, pid: s.p.pid, count: s.e.Count, since: time.Duration(s.e.Millis) * time.Millisecond}
}

func (b *Board) acksSetting(v AcksSetting) {
	if v.Err != nil {
		b.event(v.At, Producer, LevelBad, fmt.Sprintf("acks switch failed: %v; it keeps acks=%s", v.Err, v.Acks))
		b.acks.setting = v.Acks
		return
	}
	if v.Acks == "" || v.Acks == b.AcksSetting() {
		return
	}
	b.acks.setting = v.Acks
	b.event(v.At, Producer, LevelAction, "from now on "+lesson.Acks(v.Acks).Meaning())
}

// onAcksSet: the producer switched (flushed, then a new producer).
func (b *Board) onAcksSet(s statusEvent) {
	b.acks.running = s.e.Acks
	b.say(s, LevelInfo, fmt.Sprintf("acks=%s in force: %s flushed first, new producer in %s",
		s.e.Acks, Plural(s.e.Count, "record"), switchTook(time.Duration(s.e.Millis)*time.Millisecond)))
}

func switchTook(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func (b *Board) ackedCheck(v AckedCheck) {
	if v.Err != nil {
		// The last good read stays; the view says the log is unreadable.
		b.acks.check.Err = v.Err
		return
	}
	v.Missing = slices.Clone(v.Missing)
	v.Latest = maps.Clone(v.Latest)
	v.EarlierRound = maps.Clone(v.EarlierRound)
	v.Gaps = slices.Clone(v.Gaps)
	b.acks.check, b.acks.seen = v, true
	b.sayGaps(v)
	// A loss is found when the audit reads past its offset, in any
	// partition: name the ones not named yet.
	var fresh []LostWrite
	for _, w := range v.Missing {
		if !b.acks.lostSaid[w] {
			fresh = append(fresh, w)
		}
	}
	if len(fresh) == 0 {
		return
	}
	if b.acks.lostSaid == nil {
		b.acks.lostSaid = map[AckedRecord]bool{}
	}
	var placed, unplaced []LostWrite
	for _, w := range fresh {
		b.acks.lostSaid[w] = true
		if w.Placed() {
			placed = append(placed, w)
		} else {
			unplaced = append(unplaced, w)
		}
	}
	if len(placed) > 0 {
		b.event(v.At, "", LevelBad, fmt.Sprintf("%s lost: %s, not in the topic (it holds other records at those offsets)",
			Plural(int64(len(placed)), "acknowledged write"), LostRanges(placed)))
	}
	if len(unplaced) > 0 {
		b.event(v.At, "", LevelBad, fmt.Sprintf("%s sent with acks=0 lost, %s: not in the topic; the producer counted them as sent",
			Plural(int64(len(unplaced)), "record"), UnplacedCounts(unplaced)))
	}
}

// UnplacedCounts says how many of the lost writes sent with acks=0 (no
// offset) each partition had: "1 in p0, 2 in p2".
func UnplacedCounts(lost []LostWrite) string {
	n := map[int32]int{}
	for _, w := range lost {
		if !w.Placed() {
			n[w.Partition]++
		}
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d in p%d", n[p], p))
	}
	return strings.Join(parts, ", ")
}

// LostRanges says where lost writes were acknowledged, by partition with
// runs of offsets and their acks setting: "p1 offsets 120–134, 140 (acks=1)";
// those sent with acks=0 have no offset and are counted: "p2 3 sent with
// acks=0".
func LostRanges(lost []LostWrite) string {
	byPart := map[int32][]LostWrite{}
	unplaced := map[int32]int64{}
	for _, w := range lost {
		if !w.Placed() {
			unplaced[w.Partition]++
			continue
		}
		byPart[w.Partition] = append(byPart[w.Partition], w)
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(unplaced)) {
		if _, ok := byPart[p]; !ok {
			byPart[p] = nil
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		if n := unplaced[p]; n > 0 {
			parts = append(parts, fmt.Sprintf("p%d %d sent with acks=0", p, n))
		}
		ws := byPart[p]
		if len(ws) == 0 {
			continue
		}
		slices.SortFunc(ws, func(a, c LostWrite) int { return cmp.Compare(a.Offset, c.Offset) })
		var runs []string
		acks := map[string]bool{}
		for i := 0; i < len(ws); {
			j := i
			for j+1 < len(ws) && ws[j+1].Offset <= ws[j].Offset+1 {
				j++
			}
			if ws[j].Offset == ws[i].Offset {
				runs = append(runs, fmt.Sprint(ws[i].Offset))
			} else {
				runs = append(runs, fmt.Sprintf("%d–%d", ws[i].Offset, ws[j].Offset))
			}
			for k := i; k <= j; k++ {
				acks[ws[k].Acks] = true
			}
			i = j + 1
		}
		word := "offset"
		if len(ws) > 1 {
			word = "offsets"
		}
		settings := make([]string, 0, len(acks))
		for _, a := range slices.Sorted(maps.Keys(acks)) {
			settings = append(settings, "acks="+a)
		}
		parts = append(parts, fmt.Sprintf("p%d %s %s (%s)", p, word, strings.Join(runs, ", "), strings.Join(settings, ", ")))
	}
	return strings.Join(parts, "; ")
}

// AcksView is the producer's acks and what became of its acknowledged
// writes.
type AcksView struct {
	// Setting: how the producer is (re)started from now on; Running: what
	// the running producer uses ("" when it is down or has not said).
	Setting, Running string
	// Seen: the log of acknowledged records was read at least once.
	Seen bool
	At   time.Time
	// Acknowledged, Pending, Unconfirmed, PendingUnplaced, Missing, Latest
	// and EarlierRound as the latest AckedCheck.
	Acknowledged, Pending        int64
	Unconfirmed, PendingUnplaced int64
	Missing                      []LostWrite
	Latest, EarlierRound         map[int32]AckedRecord
	// Unchecked, Gaps: the records the log could not list; LogFailing:
	// the producer's error while its log fails (until its marker).
	Unchecked  int64
	Gaps       []AckedGap
	LogFailing string
	Err        error
	// Waiting: the records the running producer held unacknowledged at its
	// latest progress report (WaitingAt), none acknowledged for WaitingFor.
	Waiting    int64
	WaitingFor time.Duration
	WaitingAt  time.Time
}

// Acks is the acks view.
func (b *Board) Acks() AcksView {
	c := b.acks.check
	v := AcksView{Setting: b.AcksSetting(), Seen: b.acks.seen, At: c.At, Acknowledged: c.Acknowledged, Pending: c.Pending,
		Unconfirmed: c.Unconfirmed, PendingUnplaced: c.PendingUnplaced,
		Missing: slices.Clone(c.Missing), Latest: maps.Clone(c.Latest), EarlierRound: maps.Clone(c.EarlierRound), Unchecked: c.Unchecked, Gaps: slices.Clone(c.Gaps), LogFailing: b.acks.logFailing, Err: c.Err}
	if p := b.procs[Producer]; p != nil && p.alive() {
		v.Running = b.acks.running
		if w := b.acks.waiting; w.pid == p.pid {
			v.Waiting, v.WaitingFor, v.WaitingAt = w.count, w.since, w.at
		}
	}
	return v
}

// acksUnrefused: the producer writes with acks=1 or acks=0, which the
// leader takes whatever its ISR (min.insync.replicas binds acks=all only).
func (b *Board) acksUnrefused() bool { return b.producerAcks() != string(lesson.AcksAll) }

// unrefusedAcks is the producer's acks when no ISR refuses its writes
// (acksUnrefused), else "".
func (b *Board) unrefusedAcks() string {
	if !b.acksUnrefused() {
		return ""
	}
	return b.producerAcks()
}

// producerAcks is the running producer's acks as it said, else the
// setting it starts with.
func (b *Board) producerAcks() string {
	if p := b.procs[Producer]; p != nil && p.alive() && b.acks.running != "" {
		return b.acks.running
	}
	return b.AcksSetting()
}

// AcksSetting is the producer's acks setting from now on ("all" unless
// the dashboard switched it).
func (b *Board) AcksSetting() string {
	if b.acks.setting == "" {
		return string(lesson.AcksAll)
	}
	return b.acks.setting
}

// AckedSince reports whether the producer acknowledged a record on
// partition whose payload timestamp is after t, as far as the log was read.
func (v AcksView) AckedSince(partition int32, t time.Time) bool {
	r, ok := v.Latest[partition]
	return ok && r.Timestamp > t.UnixMilli()
}

// AckedInTwoRoundsSince reports whether the producer acknowledged records
// on partition from two rounds (payload timestamps) after t. Followers
// frozen at t can still get the first round: the fetch each sent before
// the freeze waits at the leader, is answered with it, and lies in their
// socket until they are thawed. The second round has no fetch to go out
// on: only the leader has it.
func (v AcksView) AckedInTwoRoundsSince(partition int32, t time.Time) bool {
	r, ok := v.EarlierRound[partition]
	return ok && r.Timestamp > t.UnixMilli() && v.AckedSince(partition, t)
}

// ReportAcks is the report's acks: the setting the producer writes with
// (as it said, else the one it starts with), how many writes its log says
// were acknowledged, and every one of them the topic does not hold (by key
// and payload timestamp) as far as the audit has read; with the producer
// paused and the audit caught up, that is all of them. Missing covers the
// Checked ones only: the Unchecked, in UncheckedSpans, are records the log
// could not list (a full disk), counted but not looked up. LogError: the
// producer's log fails at the end of the run, so the acks since are
// neither counted nor checked. Unconfirmed: of Acknowledged, the records
// sent with acks=0, which the broker never confirmed; Pending: of Checked,
// those not settled yet (a record sent with acks=0 that the topic does
// not hold is missing only once one sent after it is found).
type ReportAcks struct {
	Setting        string             `json:"setting"`
	Acknowledged   int64              `json:"acknowledged"`
	Unconfirmed    int64              `json:"unconfirmed"`
	Pending        int64              `json:"pending"`
	Checked        int64              `json:"checked"`
	Unchecked      int64              `json:"unchecked"`
	UncheckedSpans []ReportAckGap     `json:"unchecked_spans"`
	Missing        []ReportAckMissing `json:"missing"`
	LogError       string             `json:"log_error,omitempty"`
}

// ReportAckMissing is one acknowledged write the topic does not hold:
// where the broker said it stored it (offset -1: sent with acks=0, no
// offset), its sensor, its timestamp (epoch ms, the message's own) and
// the acks setting it was sent with.
type ReportAckMissing struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Sensor    string `json:"sensor"`
	Timestamp int64  `json:"timestamp"`
	Acks      string `json:"acks"`
}

func (b *Board) reportAcks() ReportAcks {
	v := b.Acks()
	r := ReportAcks{Setting: v.Setting, Acknowledged: v.Acknowledged, Unconfirmed: v.Unconfirmed, Pending: v.Pending, Checked: v.Acknowledged - v.Unchecked,
		Unchecked: v.Unchecked, UncheckedSpans: reportGaps(v.Gaps), Missing: []ReportAckMissing{}, LogError: v.LogFailing}
	if v.Running != "" {
		r.Setting = v.Running
	}
	for _, w := range v.Missing {
		offset := w.Offset
		if !w.Placed() {
			offset = -1
		}
		r.Missing = append(r.Missing, ReportAckMissing{Partition: w.Partition, Offset: offset, Sensor: w.Sensor, Timestamp: w.Timestamp, Acks: w.Acks})
	}
	return r
}
