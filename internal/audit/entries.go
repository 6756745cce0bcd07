package audit

import (
	"encoding/binary"
)

// entriesPerBlock bounds a block: a search decodes at most this many
// entries after its binary search over the blocks.
const entriesPerBlock = 128

// An entry's difference from the one before it is the offset's step with
// the record flag in its low bit, then hours and km in hundredths, as
// varints. A sensor's messages are a few offsets apart and move its
// counters by a few hundredths, so an entry takes 3–4 bytes instead of a
// whole entry's 32: a million messages cost the dashboard about 4 MB, not
// 32–64.
func (e entry) appendStep(d []byte, prev entry) []byte {
	d = binary.AppendUvarint(d, uint64(e.offset-prev.offset)<<1|uint64(e.records-prev.records))
	d = binary.AppendVarint(d, e.hoursCents-prev.hoursCents)
	return binary.AppendVarint(d, e.kmCents-prev.kmCents)
}

func (e entry) next(d []byte) (entry, []byte) {
	step, k := binary.Uvarint(d)
	d = d[k:]
	dh, k := binary.Varint(d)
	d = d[k:]
	dk, k := binary.Varint(d)
	return entry{offset: e.offset + int64(step>>1), records: e.records + int64(step&1),
		hoursCents: e.hoursCents + dh, kmCents: e.kmCents + dk}, d[k:]
}

func (e entry) at() int64   { return e.offset }
func (e entry) key() int64  { return e.offset }
func (entry) perBlock() int { return entriesPerBlock }

// entryLog is a series' entries (its records' running totals), append-only:
// each one's offset is above the last's and its records at most one more
// (a message records one delta or none).
type entryLog struct{ blockLog[entry] }

// view is the log as it is now, for a Truth.
func (l *entryLog) view() entryView { return entryView{l.blockLog.view()} }

// entryView is a series' entries at one moment.
type entryView struct{ blockView[entry] }

func (v entryView) len() int { return len(v.full)*entriesPerBlock + v.tail.n }

// last is the newest entry (only when len() > 0).
func (v entryView) last() entry { return v.tail.last }

// through is the running totals through the last entry at or before
// offset (zero totals at offset -1 when there is none).
func (v entryView) through(offset int64) entry {
	i := v.from(offset)
	if i < 0 {
		return entry{offset: -1}
	}
	b := v.block(i)
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
	i := max(v.from(after), 0)
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
