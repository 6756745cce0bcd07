package audit

import (
	"encoding/binary"
	"sort"
)

// entriesPerBlock bounds a block: a search decodes at most this many
// entries after its binary search over the blocks.
const entriesPerBlock = 128

// entryBlock is up to entriesPerBlock consecutive entries of a series: the
// first whole, each next one as varints of its difference from the one
// before it (the offset's step with the record flag in its low bit, then
// hours and km in hundredths). A sensor's messages are a few offsets apart
// and move its counters by a few hundredths, so an entry takes 3–4 bytes
// instead of a whole entry's 32: a million messages cost the dashboard
// about 4 MB, not 32–64.
type entryBlock struct {
	first, last entry
	n           int
	deltas      []byte
}

// entryLog is a series' entries, append-only. Blocks before the last are
// never changed once full, and the last one's bytes only grow, so a view
// (a copy of the last block and the full ones before it) stays valid while
// the log goes on.
type entryLog struct {
	blocks []entryBlock
}

// add appends e: its offset is above the last entry's and its records at
// most one more (a message records one delta or none).
func (l *entryLog) add(e entry) {
	n := len(l.blocks)
	if n == 0 || l.blocks[n-1].n == entriesPerBlock {
		l.blocks = append(l.blocks, entryBlock{first: e, last: e, n: 1})
		return
	}
	b := &l.blocks[n-1]
	step := uint64(e.offset-b.last.offset)<<1 | uint64(e.records-b.last.records)
	b.deltas = binary.AppendUvarint(b.deltas, step)
	b.deltas = binary.AppendVarint(b.deltas, e.hoursCents-b.last.hoursCents)
	b.deltas = binary.AppendVarint(b.deltas, e.kmCents-b.last.kmCents)
	b.last = e
	b.n++
	if b.n == entriesPerBlock {
		// Full for good: keep its bytes and no spare capacity.
		b.deltas = append([]byte(nil), b.deltas...)
	}
}

// view is the log as it is now, for a Truth.
func (l *entryLog) view() entryView {
	n := len(l.blocks)
	if n == 0 {
		return entryView{}
	}
	return entryView{full: l.blocks[: n-1 : n-1], tail: l.blocks[n-1]}
}

// entryView is a series' entries at one moment: read-only, safe while the
// log appends.
type entryView struct {
	full []entryBlock
	tail entryBlock // n == 0: no entries at all
}

func (v entryView) len() int { return len(v.full)*entriesPerBlock + v.tail.n }

func (v entryView) blocks() int {
	if v.tail.n == 0 {
		return 0
	}
	return len(v.full) + 1
}

func (v entryView) block(i int) *entryBlock {
	if i < len(v.full) {
		return &v.full[i]
	}
	return &v.tail
}

// last is the newest entry (only when len() > 0).
func (v entryView) last() entry { return v.tail.last }

// through is the running totals through the last entry at or before
// offset (zero totals at offset -1 when there is none).
func (v entryView) through(offset int64) entry {
	i := sort.Search(v.blocks(), func(i int) bool { return v.block(i).first.offset > offset })
	if i == 0 {
		return entry{offset: -1}
	}
	b := v.block(i - 1)
	if b.last.offset <= offset {
		return b.last
	}
	found := b.first
	b.each(func(e entry) bool {
		if e.offset > offset {
			return false
		}
		found = e
		return true
	})
	return found
}

// each calls fn for every entry with an offset in (after, through], in
// order.
func (v entryView) each(after, through int64, fn func(entry)) {
	i := max(sort.Search(v.blocks(), func(i int) bool { return v.block(i).first.offset > after })-1, 0)
	for ; i < v.blocks(); i++ {
		more := true
		v.block(i).each(func(e entry) bool {
			if e.offset > through {
				more = false
				return false
			}
			if e.offset > after {
				fn(e)
			}
			return true
		})
		if !more {
			return
		}
	}
}

// each calls fn for the block's entries in order while fn returns true.
func (b *entryBlock) each(fn func(entry) bool) {
	if b.n == 0 || !fn(b.first) {
		return
	}
	e, d := b.first, b.deltas
	for range b.n - 1 {
		step, k := binary.Uvarint(d)
		d = d[k:]
		dh, k := binary.Varint(d)
		d = d[k:]
		dk, k := binary.Varint(d)
		d = d[k:]
		e = entry{offset: e.offset + int64(step>>1), records: e.records + int64(step&1),
			hoursCents: e.hoursCents + dh, kmCents: e.kmCents + dk}
		if !fn(e) {
			return
		}
	}
}
