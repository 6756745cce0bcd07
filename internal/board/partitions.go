package board

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// partsState is what the board keeps of the topic's metadata.
type partsState struct {
	rows   []PartitionMeta
	topic  string
	minISR int
	at     time.Time
	seen   bool
	err    error
	// lastLeader: per partition the latest leader that was a node (not
	// -1), so a leader elected after a leaderless spell is timed from the
	// exit of the one before it.
	lastLeader map[int32]int32
	// moves: per partition its latest leader change to a node.
	moves map[int32]LeaderMove
	// isrSince: when the first read showing the current ISRs was asked.
	isrSince time.Time
}

// LeaderMove is a partition's leader change as the metadata showed it.
type LeaderMove struct {
	From, To int32
	// At: when the metadata showing To was asked for.
	At time.Time
	// After: from the exit of From's process (broker-From) to At; 0 when
	// that exit is not known (the leader moved for another reason).
	After time.Duration
	// Preferred: the leader went back to the partition's preferred
	// replica (the controller's rebalance), no exit involved.
	Preferred bool
}

func (b *Board) partitions(v Partitions) {
	if !b.partitionsRead(v) || v.At.Before(b.parts.at) {
		return // failed, or an older poll answered late
	}
	if b.parts.lastLeader == nil {
		b.parts.lastLeader = map[int32]int32{}
	}
	old := map[int32]PartitionMeta{}
	for _, r := range b.parts.rows {
		old[r.Partition] = r
	}
	rows := make([]PartitionMeta, len(v.Rows))
	// ISR changes first, one event per change shared by several partitions
	// (a broker leaving every ISR is one line, not three); leader changes
	// after them, so on a short events panel the election stays in view.
	isr := isrChanges{minISR: v.MinISR, partitions: map[isrChange][]int32{}, level: map[isrChange]Level{}, unrefused: b.unrefusedAcks()}
	var moved [][2]PartitionMeta
	for i, r := range v.Rows {
		r.Replicas, r.ISR, r.Sensors = slices.Clone(r.Replicas), slices.Clone(r.ISR), slices.Clone(r.Sensors)
		rows[i] = r
		prev, had := old[r.Partition]
		if !had || !b.parts.seen {
			if r.Leader >= 0 {
				b.parts.lastLeader[r.Partition] = r.Leader
			}
			continue
		}
		moved = append(moved, [2]PartitionMeta{prev, r})
		isr.add(prev, r)
	}
	if len(isr.changes) > 0 || !b.parts.seen {
		b.parts.isrSince = v.At
	}
	for _, c := range isr.changes {
		b.event(v.At, "", isr.level[c], isr.text(c))
	}
	for _, m := range moved {
		b.leaderChange(v.At, m[0], m[1])
	}
	slices.SortFunc(rows, func(a, c PartitionMeta) int { return int(a.Partition - c.Partition) })
	if b.parts.seen && len(rows) > len(b.parts.rows) && len(b.parts.rows) > 0 {
		b.noteGrowth(v.At, b.parts.rows, rows)
	}
	b.parts.rows, b.parts.topic, b.parts.minISR, b.parts.at, b.parts.seen = rows, v.Topic, v.MinISR, v.At, true
	if p := b.procs[Producer]; p != nil && p.alive() && !p.producer.blockedSince.IsZero() {
		b.sayBlocked(v.At, p, false)
	}
}

// partitionsRead notes whether the read of the partitions failed or works
// again, and reports whether it worked.
func (b *Board) partitionsRead(v Partitions) bool {
	if v.Err != nil {
		if b.parts.err == nil {
			b.pollFailed(v.At, "", "reading the topic's partitions failed: ", v.Err)
		}
		b.parts.err = v.Err
		return false
	}
	if b.parts.err != nil && b.parts.seen {
		b.event(v.At, "", LevelInfo, "reading the topic's partitions works again")
	}
	b.parts.err = nil
	return true
}

// isrChange is an ISR going from one node list to another.
type isrChange struct{ from, to string }

// isrChanges gathers one read's ISR changes, in order, each with the
// partitions it happened to and how bad it is.
type isrChanges struct {
	minISR int
	// unrefused: the producer's acks setting when no ISR refuses it (1 or
	// 0), else "".
	unrefused  string
	changes    []isrChange
	partitions map[isrChange][]int32
	level      map[isrChange]Level
}

func (c *isrChanges) add(prev, cur PartitionMeta) {
	if slices.Equal(prev.ISR, cur.ISR) {
		return
	}
	ch := isrChange{nodeList(prev.ISR), nodeList(cur.ISR)}
	if _, ok := c.partitions[ch]; !ok {
		c.changes = append(c.changes, ch)
	}
	c.partitions[ch] = append(c.partitions[ch], cur.Partition)
	l := LevelGood
	if len(cur.ISR) < len(prev.ISR) {
		l = LevelWarn
	}
	if c.minISR > 0 && len(cur.ISR) < c.minISR {
		l = LevelBad
	}
	c.level[ch] = max(c.level[ch], l)
}

func (c *isrChanges) text(ch isrChange) string {
	ps := c.partitions[ch]
	text := fmt.Sprintf("partition %d ISR %s → %s", ps[0], ch.from, ch.to)
	if len(ps) > 1 {
		names := make([]string, len(ps))
		for i, p := range ps {
			names[i] = fmt.Sprint(p)
		}
		text = fmt.Sprintf("partitions %s ISR %s → %s", strings.Join(names, " "), ch.from, ch.to)
	}
	switch {
	case c.level[ch] == LevelBad && c.unrefused != "":
		text += fmt.Sprintf(" < min.insync.replicas %d: the producer's acks=%s writes are still taken (only acks=all is refused)", c.minISR, c.unrefused)
	case c.level[ch] == LevelBad:
		text += fmt.Sprintf(" < min.insync.replicas %d: writes refused (NOT_ENOUGH_REPLICAS)", c.minISR)
	}
	return text
}

// leaderChange reports a partition's new leader, timed from the exit of
// the process of the node that led it before (broker-N for node N) to
// when the metadata showing the new one was asked for.
func (b *Board) leaderChange(at time.Time, prev, cur PartitionMeta) {
	if prev.Leader == cur.Leader {
		return
	}
	if cur.Leader < 0 {
		b.event(at, "", LevelBad, fmt.Sprintf("partition %d has no leader (was %d)", cur.Partition, prev.Leader))
		return
	}
	from, ok := b.parts.lastLeader[cur.Partition]
	b.parts.lastLeader[cur.Partition] = cur.Leader
	if !ok || from == cur.Leader {
		b.event(at, "", LevelGood, fmt.Sprintf("partition %d leader %d elected", cur.Partition, cur.Leader))
		return
	}
	text := fmt.Sprintf("partition %d leader %d → %d", cur.Partition, from, cur.Leader)
	move := LeaderMove{From: from, To: cur.Leader, At: at}
	level := LevelWarn
	p := b.procs[ClusterBroker(int(from))]
	switch {
	case p != nil && p.lastExit != nil && !p.lastExit.At.After(at) && !p.alive():
		move.After = at.Sub(p.lastExit.At)
		text += fmt.Sprintf(" in %.1f s after %s exited (metadata polled every 0.5 s)", move.After.Seconds(), p.name)
	case cur.Preferred > 0 && cur.Leader == cur.Preferred && slices.Contains(cur.ISR, from):
		// The controller's leader rebalance, nothing failed (the old
		// leader is still in sync): the first replica of the assignment
		// is the partition's preferred leader.
		move.Preferred, level = true, LevelInfo
		text += " (back to its preferred leader, the first replica)"
	}
	if b.parts.moves == nil {
		b.parts.moves = map[int32]LeaderMove{}
	}
	b.parts.moves[cur.Partition] = move
	b.event(at, "", level, text)
}

// nodeList is "[1 2 3]".
func nodeList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// NodeList formats node ids as the panel and the events do: "[1 2 3]".
func NodeList(ids []int32) string { return nodeList(ids) }

// PartitionsView is the partitions panel.
type PartitionsView struct {
	Topic string
	// Seen: a metadata read succeeded at least once; Stale: the latest
	// failed (Err) or is older than StaleAfter.
	Seen, Stale bool
	Err         error
	At          time.Time
	// ISRSince: when the first metadata read showing the current ISRs
	// was asked (a watermark read asked later saw them in force).
	ISRSince time.Time
	MinISR   int
	// Nodes: the distinct node ids holding a replica, in order.
	Nodes []int32
	// SingleNode: one node holds everything and nothing is replicated
	// (the embedded broker).
	SingleNode bool
	// Group: the consumer group whose committed offsets the rows carry.
	Group string
	// OffsetsStale: the latest high-watermark read failed (during a leader
	// change, say); the rows carry the last ones read, and lags from them.
	OffsetsStale bool
	Rows         []PartitionRow
	// Keys: the audit's read of the topic, key by key, against Rows.
	Keys KeysCheck
	// Acked: the producer's acks and its acknowledged writes against the
	// topic (acks.go).
	Acked AcksView
	// Growth: partitions added to the topic in this run (nil: none).
	Growth *Growth
	// Retention: the short retention the lab set (0: the topic's own);
	// Trimmed: a partition's log start is past 0 (retention deleted its
	// oldest records, in this run or before).
	Retention time.Duration
	Trimmed   bool
}

// KeysCheck is the audit's read of the topic set against the partitioner:
// whether every sensor's records are in the partition its key hashes to,
// and in order.
type KeysCheck struct {
	// Seen: the audit has read the topic at least once; At: its latest read.
	Seen bool
	At   time.Time
	// Keys: the sensors checked (placed by the partitioner, records read);
	// Records: their valid records; Disordered: records of a key not later
	// than the key's previous one (0 while per-key order holds).
	Keys                int
	Records, Disordered int64
	// Scattered: sensors whose records the audit found in a partition other
	// than the computed one ("sensor-03 in [0 2], computed 1"), in order.
	Scattered []string
	// DisorderedKeys: the sensors with Disordered records, in order.
	DisorderedKeys []string
	// Moved: the keys whose records are in the partition they hash to now
	// after records in the one they hashed to before partitions were
	// added (the audit's moves, each sensor's in order); Moving: sensors
	// whose key hashes elsewhere since partitions were added in this run
	// and whose records the audit has not read there yet.
	Moved  []KeyMove
	Moving []string
	// Through: per partition, the offset after the last record the audit
	// had read (what Records counts up to); nil when unknown.
	Through map[int32]int64
}

// PartitionRow is one partition's line.
type PartitionRow struct {
	PartitionMeta
	// HighWatermark: -1 unknown. LogStart: the first offset still in the
	// log, read just before it (-1 unknown).
	HighWatermark, LogStart int64
	// Committed: Group's committed offset; -1 none or unknown
	// (CommittedUnknown: the latest read failed, or none was made). Lag:
	// HighWatermark - Committed, -1 unknown.
	Committed, Lag   int64
	CommittedUnknown bool
	Leaderless       bool
	UnderReplicated  bool // ISR smaller than the replicas
	BelowMinISR      bool // ISR smaller than min.insync.replicas: acks=all refused
	// Misplaced: sensors consumer-current last read from another
	// partition than the partitioner puts their key in (should stay empty).
	Misplaced []string
	// LastMove: the partition's latest leader change seen (nil: none).
	LastMove *LeaderMove
	// LeaderDown: the metadata still names a leader whose broker process
	// is down (the controller has not fenced it yet).
	LeaderDown bool
}

// Fresh: the latest metadata read succeeded, is recent and has partitions.
func (v PartitionsView) Fresh() bool { return v.Seen && !v.Stale && len(v.Rows) > 0 }

// AllInSync: every partition has a leader and exactly n in-sync replicas
// (by fresh metadata).
func (v PartitionsView) AllInSync(n int) bool {
	if !v.Fresh() {
		return false
	}
	for _, r := range v.Rows {
		if r.Leaderless || len(r.ISR) != n {
			return false
		}
	}
	return true
}

// Balanced: by fresh metadata, every partition is led by its preferred
// (first) replica, as the controller's rebalance leaves them.
func (v PartitionsView) Balanced() bool {
	if !v.Fresh() {
		return false
	}
	for _, r := range v.Rows {
		if r.Leaderless || r.Leader != r.Preferred {
			return false
		}
	}
	return true
}

// LedBy lists the partitions node leads.
func (v PartitionsView) LedBy(node int32) []int32 {
	var out []int32
	for _, r := range v.Rows {
		if r.Leader == node {
			out = append(out, r.Partition)
		}
	}
	return out
}

// Partitions is the partitions panel's view.
func (b *Board) Partitions() PartitionsView {
	v := PartitionsView{Topic: b.parts.topic, Seen: b.parts.seen, Err: b.parts.err, At: b.parts.at, ISRSince: b.parts.isrSince, MinISR: b.parts.minISR}
	if v.Topic == "" {
		v.Topic = b.cfg.Topic
	}
	v.Stale = b.parts.err != nil || (b.parts.seen && b.now.Sub(b.parts.at) > StaleAfter)
	placed := map[string]int32{}
	nodes := map[int32]bool{}
	replicated := false
	for _, r := range b.parts.rows {
		for _, s := range r.Sensors {
			placed[s] = r.Partition
		}
		for _, n := range r.Replicas {
			nodes[n] = true
		}
		if len(r.Replicas) > 1 {
			replicated = true
		}
	}
	read := map[int32][]string{}
	for _, s := range b.sensors {
		if want, ok := placed[s.SensorID]; ok && want != s.Partition && !b.holdsLatest(s) {
			read[want] = append(read[want], s.SensorID)
		}
	}
	v.Group, v.OffsetsStale = b.commitGroup, b.hwmErr != nil
	for _, r := range b.parts.rows {
		v.Rows = append(v.Rows, b.partitionRow(r, read[r.Partition]))
	}
	for n := range nodes {
		v.Nodes = append(v.Nodes, n)
	}
	slices.Sort(v.Nodes)
	v.SingleNode = len(v.Nodes) == 1 && !replicated
	v.Keys = b.keysCheck(placed)
	v.Acked = b.Acks()
	v.Growth = b.Growth()
	v.Retention = b.ret.setting
	for _, r := range v.Rows {
		v.Trimmed = v.Trimmed || r.LogStart > 0
	}
	return v
}

// holdsLatest: consumer-current's state of the sensor is the latest record
// the audit read of it, wherever that is (a key that moved has its latest
// record in its old partition until the producer writes to the new one).
func (b *Board) holdsLatest(s SensorState) bool {
	t, ok := b.truth[s.SensorID]
	return ok && t.Last != nil && t.Last.Partition == s.Partition && t.Last.Offset == s.Offset
}

// partitionRow is partition r's row; misread: the sensors consumer-current
// read elsewhere than in r, where the partitioner places them.
func (b *Board) partitionRow(r PartitionMeta, misread []string) PartitionRow {
	row := PartitionRow{PartitionMeta: r, HighWatermark: -1, LogStart: -1, Committed: -1, Lag: -1}
	current := b.commitRead.seen && b.commitRead.err == nil
	if hw, ok := b.hwm[r.Partition]; ok {
		row.HighWatermark = hw
	}
	if s, ok := b.ret.logStart[r.Partition]; ok {
		row.LogStart = s
	}
	if c, ok := b.committed[r.Partition]; ok && current {
		row.Committed = c
	}
	row.CommittedUnknown = !current
	if row.HighWatermark >= 0 && row.Committed >= 0 {
		row.Lag = max(row.HighWatermark-row.Committed, 0)
	}
	row.Leaderless = r.Leader < 0
	row.UnderReplicated = len(r.ISR) < len(r.Replicas)
	row.BelowMinISR = b.parts.minISR > 0 && len(r.ISR) < b.parts.minISR
	row.Misplaced = slices.Sorted(slices.Values(misread))
	if m, ok := b.parts.moves[r.Partition]; ok {
		row.LastMove = &m
	}
	if p := b.procs[ClusterBroker(int(r.Leader))]; r.Leader > 0 && p != nil && !p.alive() {
		row.LeaderDown = true
	}
	return row
}

// keysCheck sets the audit's latest read against where the partitioner
// places each sensor (placed).
func (b *Board) keysCheck(placed map[string]int32) KeysCheck {
	k := KeysCheck{Seen: b.truthRead.seen, At: b.truthRead.at, Through: maps.Clone(b.auditThrough)}
	for _, id := range slices.Sorted(maps.Keys(b.truth)) {
		t := b.truth[id]
		want, ok := placed[id]
		if !ok || len(t.Partitions) == 0 {
			continue
		}
		k.Keys++
		k.Records += t.Valid
		k.Disordered += t.Disordered
		if t.Disordered > 0 {
			k.DisorderedKeys = append(k.DisorderedKeys, id)
		}
		moves := b.keyMovesOf(id)
		switch {
		case len(t.Partitions) == 1 && t.Partitions[0] == want:
		case movedTo(moves, t.Partitions, want):
			k.Moved = append(k.Moved, moves...)
		case b.moving(id, t.Partitions, want):
			k.Moving = append(k.Moving, id)
		default:
			k.Scattered = append(k.Scattered, fmt.Sprintf("%s in %s, computed %d", id, nodeList(t.Partitions), want))
		}
	}
	return k
}

// moving: the sensor's key hashes to want since partitions were added in
// this run, and its records are all still where it hashed before.
func (b *Board) moving(id string, read []int32, want int32) bool {
	g := b.moves.growth
	if g == nil || len(read) != 1 {
		return false
	}
	return slices.Contains(g.Planned, PlannedMove{Sensor: id, From: read[0], To: want})
}

// NotEnoughReplicas says why acks=all writes are refused when the latest
// metadata shows a partition whose ISR is below min.insync.replicas:
// "NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)"; "" otherwise.
func (b *Board) NotEnoughReplicas() string {
	if b.parts.minISR <= 0 || b.parts.err != nil {
		return ""
	}
	low := -1
	for _, r := range b.parts.rows {
		if len(r.ISR) < b.parts.minISR && (low < 0 || len(r.ISR) < low) {
			low = len(r.ISR)
		}
	}
	if low < 0 {
		return ""
	}
	return fmt.Sprintf("NOT_ENOUGH_REPLICAS (isr %d < min.insync.replicas %d)", low, b.parts.minISR)
}
