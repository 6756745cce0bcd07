package audit

import (
	"encoding/binary"
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

// A content's difference from the one before it is the varints of its
// offset step and timestamp step (about 3 bytes, and 1.7 of block headers:
// a million records cost the dashboard some 5 MB; a lookup decodes at most
// 64); each block keeps its smallest and largest timestamp (key) so a
// search by timestamp skips the blocks that cannot hold it.
func (c content) appendStep(d []byte, prev content) []byte {
	d = binary.AppendUvarint(d, uint64(c.offset-prev.offset))
	return binary.AppendVarint(d, c.timestamp-prev.timestamp)
}

func (c content) next(d []byte) (content, []byte) {
	step, k := binary.Uvarint(d)
	d = d[k:]
	dt, k := binary.Varint(d)
	return content{offset: c.offset + int64(step), timestamp: c.timestamp + dt}, d[k:]
}

func (c content) at() int64   { return c.offset }
func (c content) key() int64  { return c.timestamp }
func (content) perBlock() int { return contentsPerBlock }

// contentLog is a series' contents, append-only like entryLog.
type contentLog struct{ blockLog[content] }

func (l *contentLog) view() contentView { return contentView{l.blockLog.view()} }

// contentView is a series' contents at one moment, read-only.
type contentView struct{ blockView[content] }

// at is the timestamp of the record at offset, if the series has one there.
func (v contentView) at(offset int64) (int64, bool) {
	i := v.from(offset)
	if i < 0 {
		return 0, false
	}
	b := v.block(i)
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
		if ts < b.minKey || ts > b.maxKey {
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
	return t.HoldsAnywhere(key, ts), true
}

// HoldsAnywhere reports whether the topic, as far as the audit has read
// it, holds a record of key with timestamp ts, in any of the key's
// partitions, at any offset.
func (t Truth) HoldsAnywhere(key string, ts int64) bool {
	st, ok := t.Sensor(key)
	if !ok {
		return false
	}
	for _, p := range st.PartitionIDs {
		if t.contents[seriesKey{key, p}].holds(ts) {
			return true
		}
	}
	return false
}
