package audit

import (
	"encoding/binary"
	"sort"
)

// contentsPerBlock bounds a block of a series' contents, as entriesPerBlock
// does for its entries.
const contentsPerBlock = 64

// content is what tells one record of a series from another: its offset
// and the timestamp in its value (epoch ms). A record is found by content
// (the acknowledged-writes check) from its key (the series) and that
// timestamp: a leader elected without a record gives its offset to
// another one.
type content struct {
	offset, timestamp int64
}

// contentBlock is up to contentsPerBlock consecutive contents of a series:
// the first whole, each next one as the varints of its offset step and
// timestamp step (about 3 bytes, and 1.7 of block headers: a million
// records cost the dashboard some 5 MB; a lookup decodes at most 64), with
// the block's smallest and largest timestamp so a search by timestamp skips
// the blocks that cannot hold it.
type contentBlock struct {
	first, last content
	minTS       int64
	maxTS       int64
	n           int
	deltas      []byte
}

// contentLog is a series' contents, append-only like entryLog: a view (the
// full blocks and a copy of the last one) stays valid while it grows.
type contentLog struct {
	blocks []contentBlock
}

// add appends c; its offset is above the last one's.
func (l *contentLog) add(c content) {
	n := len(l.blocks)
	if n == 0 || l.blocks[n-1].n == contentsPerBlock {
		l.blocks = append(l.blocks, contentBlock{first: c, last: c, minTS: c.timestamp, maxTS: c.timestamp, n: 1})
		return
	}
	b := &l.blocks[n-1]
	b.deltas = binary.AppendUvarint(b.deltas, uint64(c.offset-b.last.offset))
	b.deltas = binary.AppendVarint(b.deltas, c.timestamp-b.last.timestamp)
	b.last = c
	b.minTS, b.maxTS = min(b.minTS, c.timestamp), max(b.maxTS, c.timestamp)
	b.n++
	if b.n == contentsPerBlock {
		b.deltas = append([]byte(nil), b.deltas...)
	}
}

func (l *contentLog) view() contentView {
	n := len(l.blocks)
	if n == 0 {
		return contentView{}
	}
	return contentView{full: l.blocks[: n-1 : n-1], tail: l.blocks[n-1]}
}

// contentView is a series' contents at one moment, read-only.
type contentView struct {
	full []contentBlock
	tail contentBlock
}

func (v contentView) blocks() int {
	if v.tail.n == 0 {
		return 0
	}
	return len(v.full) + 1
}

func (v contentView) block(i int) *contentBlock {
	if i < len(v.full) {
		return &v.full[i]
	}
	return &v.tail
}

// at is the timestamp of the record at offset, if the series has one there.
func (v contentView) at(offset int64) (int64, bool) {
	i := sort.Search(v.blocks(), func(i int) bool { return v.block(i).first.offset > offset })
	if i == 0 {
		return 0, false
	}
	b := v.block(i - 1)
	if offset > b.last.offset {
		return 0, false
	}
	ts, found := int64(0), false
	b.each(func(c content) bool {
		if c.offset >= offset {
			ts, found = c.timestamp, c.offset == offset
			return false
		}
		return true
	})
	return ts, found
}

// holds reports whether the series has a record with timestamp ts.
func (v contentView) holds(ts int64) bool {
	for i := range v.blocks() {
		b := v.block(i)
		if ts < b.minTS || ts > b.maxTS {
			continue
		}
		found := false
		b.each(func(c content) bool {
			found = c.timestamp == ts
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// each calls fn for the block's contents in order while fn returns true.
func (b *contentBlock) each(fn func(content) bool) {
	if b.n == 0 || !fn(b.first) {
		return
	}
	c, d := b.first, b.deltas
	for range b.n - 1 {
		step, k := binary.Uvarint(d)
		d = d[k:]
		dt, k := binary.Varint(d)
		d = d[k:]
		c = content{offset: c.offset + int64(step), timestamp: c.timestamp + dt}
		if !fn(c) {
			return
		}
	}
}

// Holds reports whether the topic, as far as the audit has read it, holds
// a record of key with timestamp ts (its value's timestamp field), looking
// first at offset of partition (where the producer was told it landed),
// then at every record of the key. read is false when the audit has not
// read that far into partition yet: the answer is then not known.
func (t Truth) Holds(key string, ts int64, partition int32, offset int64) (held, read bool) {
	if !t.hasRead(partition, offset) {
		return false, false
	}
	if got, ok := t.contents[seriesKey{key, partition}].at(offset); ok && got == ts {
		return true, true
	}
	st, ok := t.Sensor(key)
	if !ok {
		return false, true
	}
	for _, p := range st.PartitionIDs {
		if t.contents[seriesKey{key, p}].holds(ts) {
			return true, true
		}
	}
	return false, true
}
