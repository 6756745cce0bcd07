package audit

import "sort"

// blockItem is what a blockLog keeps: one record of a series, in offset
// order, stored as its difference from the one before it.
type blockItem[T any] interface {
	// appendStep appends to d the difference of this item from prev (the
	// one before it).
	appendStep(d []byte, prev T) []byte
	// next decodes from d the item after this one, and returns the rest of d.
	next(d []byte) (T, []byte)
	// at is the item's offset.
	at() int64
	// key is what a search other than by offset looks for: each block
	// keeps the smallest and largest of its items'.
	key() int64
	// perBlock bounds a block: a search decodes at most this many items
	// after its binary search over the blocks.
	perBlock() int
}

// block is up to perBlock consecutive items of a series: the first whole,
// each next one as varints of its difference from the one before it.
type block[T blockItem[T]] struct {
	first, last    T
	minKey, maxKey int64
	n              int
	deltas         []byte
}

// blockLog is a series' items, append-only. Blocks before the last are
// never changed once full, and the last one's bytes only grow, so a view
// (a copy of the last block and the full ones before it) stays valid while
// the log goes on.
type blockLog[T blockItem[T]] struct {
	blocks []block[T]
}

// add appends x: its offset is above the last item's.
func (l *blockLog[T]) add(x T) {
	n := len(l.blocks)
	if n == 0 || l.blocks[n-1].n == x.perBlock() {
		l.blocks = append(l.blocks, block[T]{first: x, last: x, minKey: x.key(), maxKey: x.key(), n: 1})
		return
	}
	b := &l.blocks[n-1]
	b.deltas = x.appendStep(b.deltas, b.last)
	b.last = x
	b.minKey, b.maxKey = min(b.minKey, x.key()), max(b.maxKey, x.key())
	b.n++
	if b.n == x.perBlock() {
		// Full for good: keep its bytes and no spare capacity.
		b.deltas = append([]byte(nil), b.deltas...)
	}
}

// view is the log as it is now.
func (l *blockLog[T]) view() blockView[T] {
	n := len(l.blocks)
	if n == 0 {
		return blockView[T]{}
	}
	return blockView[T]{full: l.blocks[: n-1 : n-1], tail: l.blocks[n-1]}
}

// blockView is a series' items at one moment: read-only, safe while the
// log appends.
type blockView[T blockItem[T]] struct {
	full []block[T]
	tail block[T] // n == 0: no items at all
}

func (v blockView[T]) blocks() int {
	if v.tail.n == 0 {
		return 0
	}
	return len(v.full) + 1
}

func (v blockView[T]) block(i int) *block[T] {
	if i < len(v.full) {
		return &v.full[i]
	}
	return &v.tail
}

// from is the index of the last block whose first item is at or before
// offset (-1: none).
func (v blockView[T]) from(offset int64) int {
	return sort.Search(v.blocks(), func(i int) bool { return v.block(i).first.at() > offset }) - 1
}

// each calls fn for the block's items in order while fn returns true.
func (b *block[T]) each(fn func(T) bool) {
	if b.n == 0 || !fn(b.first) {
		return
	}
	x, d := b.first, b.deltas
	for range b.n - 1 {
		x, d = x.next(d)
		if !fn(x) {
			return
		}
	}
}
