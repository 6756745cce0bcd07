package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLine bounds one line kept from a child; longer lines are cut.
const maxLine = 64 * 1024

// readLines calls fn for every line of r (without the newline) until EOF or
// an error, and never stops reading early: a child must never block on a
// full pipe because one of its lines was too long. line is only valid
// during the call.
func readLines(r io.Reader, fn func(line []byte)) {
	br := bufio.NewReaderSize(r, 16*1024)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) < maxLine {
				long = append(long, chunk...)
			}
			continue
		}
		if len(long) > 0 {
			long = append(long, chunk...)
			chunk = long
			long = long[:0]
		}
		if len(chunk) > 0 {
			chunk = bytes.TrimRight(chunk, "\r\n")
			if len(chunk) > maxLine {
				chunk = chunk[:maxLine]
			}
			fn(chunk)
		}
		if err != nil {
			return
		}
	}
}

// ring keeps the last lines of a process for Tail.
type ring struct {
	lines []string
	next  int
	full  bool
}

func newRing(n int) *ring { return &ring{lines: make([]string, n)} }

func (r *ring) add(line string) {
	r.lines[r.next] = line
	r.next++
	if r.next == len(r.lines) {
		r.next = 0
		r.full = true
	}
}

// last returns up to n of the newest lines, oldest first.
func (r *ring) last(n int) []string {
	size := r.next
	if r.full {
		size = len(r.lines)
	}
	n = min(n, size)
	if n <= 0 {
		return nil
	}
	out := make([]string, 0, n)
	start := r.next - n
	if start < 0 {
		start += len(r.lines)
	}
	for i := range n {
		out = append(out, r.lines[(start+i)%len(r.lines)])
	}
	return out
}
