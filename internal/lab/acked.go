package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/producer"
)

const (
	// ackedEvery is how often the producer's log of acknowledged records is
	// read and set against the audit: the producer writes it out every
	// producer.AckedFlushEvery, so a write shows within about 0.7 s, and
	// the screen draws routine readings twice a second anyway (ui.Settle).
	ackedEvery = 500 * time.Millisecond
	// ackedChunk bounds one read of the log (a history burst writes
	// megabytes a second), ackedBacklog the records held waiting for the
	// audit to read their offsets: past it the log is read on later.
	ackedChunk   = 4 << 20
	ackedBacklog = 500_000
	// ackedQuiet: with nothing new, the board still gets the check this
	// often (it tells a log that stopped from one nobody reads).
	ackedQuiet = 2 * time.Second
)

// ackedTail reads the producer's log of acknowledged records as it grows,
// from its beginning (it lists what this run directory's topic was told).
type ackedTail struct {
	path string
	off  int64
	buf  []byte
	rest []byte
	// keys interns the sensor ids, as a line's key would otherwise be a
	// string of its own.
	keys map[string]string
	bad  int64
}

// read returns the records and the gap markers of the whole lines written
// since the last read (at most about ackedChunk bytes of them); a missing
// log is an empty one.
func (t *ackedTail) read() ([]audit.Acked, []audit.AckGap, error) {
	// A stat alone when nothing was written since.
	st, err := os.Stat(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	size := min(st.Size()-t.off, ackedChunk)
	if size <= 0 {
		return nil, nil, nil
	}
	f, err := os.Open(t.path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if int64(cap(t.buf)) < size {
		t.buf = make([]byte, size)
	}
	n, err := f.ReadAt(t.buf[:size], t.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	t.off += int64(n)
	data := append(t.rest, t.buf[:n]...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		t.rest = data
		return nil, nil, nil
	}
	t.rest = append([]byte(nil), data[end+1:]...)
	out, gaps := t.parseLines(data[:end])
	return out, gaps, nil
}

// parseLines reads whole lines: records, gaps' markers; what it cannot read
// is counted in bad.
func (t *ackedTail) parseLines(data []byte) ([]audit.Acked, []audit.AckGap) {
	var out []audit.Acked
	var gaps []audit.AckGap
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r, g, ok := t.parseLine(line)
		if !ok {
			t.bad++
			// A cut line the next one was written onto (a producer killed
			// mid-line): the next one starts at one of its "{" and a quote.
			for i := 1; !ok; {
				j := bytes.Index(line[i:], []byte(`{"`))
				if j < 0 {
					break
				}
				i += j
				r, g, ok = t.parseLine(line[i:])
				i++
			}
			if !ok {
				continue
			}
		}
		if g != nil {
			gaps = append(gaps, *g)
			continue
		}
		out = append(out, r)
	}
	return out, gaps
}

// parseLine reads a record or a gap's marker (g non-nil).
func (t *ackedTail) parseLine(line []byte) (audit.Acked, *audit.AckGap, bool) {
	if g, ok := parseGapLine(line); ok {
		return audit.Acked{}, &g, true
	}
	r, ok := t.parse(line)
	return r, nil, ok
}

// parseGapLine reads the producer's marker of acknowledged records it could
// not list (producer.AckedGapLine).
func parseGapLine(line []byte) (audit.AckGap, bool) {
	if !bytes.HasPrefix(line, []byte(`{"not_logged":`)) {
		return audit.AckGap{}, false
	}
	var m producer.AckedGapLine
	if err := json.Unmarshal(line, &m); err != nil || m.NotLogged == nil || m.NotLogged.Count <= 0 {
		return audit.AckGap{}, false
	}
	g := audit.AckGap{Count: m.NotLogged.Count, From: m.NotLogged.From, To: m.NotLogged.To, Err: m.NotLogged.Error}
	for _, p := range m.NotLogged.Partitions {
		g.Partitions = append(g.Partitions, audit.AckGapPartition{Partition: p.Partition, FirstOffset: p.FirstOffset, LastOffset: p.LastOffset, Count: p.Count})
	}
	return g, true
}

// parse reads one line, in the exact form the producer writes it, else
// through encoding/json.
func (t *ackedTail) parse(line []byte) (audit.Acked, bool) {
	r, ok := parseAckedLine(line)
	if !ok {
		var rec producer.AckedRecord
		if err := json.Unmarshal(line, &rec); err != nil || rec.Key == "" {
			return audit.Acked{}, false
		}
		r = audit.Acked{Partition: rec.Partition, Offset: rec.Offset, Key: rec.Key, Timestamp: rec.Timestamp, Acks: rec.Acks}
	}
	if t.keys == nil {
		t.keys = map[string]string{}
	}
	if k, seen := t.keys[r.Key]; seen {
		r.Key = k
	} else {
		t.keys[r.Key] = r.Key
	}
	return r, true
}

// parseAckedLine reads {"partition":P,"offset":O,"key":"K","timestamp":T,"acks":"A"}
// with a plain key; ok false for anything else.
func parseAckedLine(b []byte) (audit.Acked, bool) {
	r := lineReader{b: b, ok: true}
	r.lit(`{"partition":`)
	p := r.num()
	r.lit(`,"offset":`)
	o := r.num()
	r.lit(`,"key":"`)
	key := r.str()
	r.lit(`,"timestamp":`)
	ts := r.num()
	r.lit(`,"acks":"`)
	acks := r.str()
	r.lit("}")
	ok := r.ok && len(bytes.TrimSpace(r.b)) == 0 && key != "" && p >= 0 && p <= math.MaxInt32
	return audit.Acked{Partition: int32(p), Offset: o, Key: key, Timestamp: ts, Acks: acks}, ok
}

// lineReader reads a line in a fixed form; ok turns false at the first
// thing that differs, and everything after reads as zero.
type lineReader struct {
	b  []byte
	ok bool
}

func (r *lineReader) lit(s string) {
	if r.ok = r.ok && bytes.HasPrefix(r.b, []byte(s)); r.ok {
		r.b = r.b[len(s):]
	}
}

func (r *lineReader) num() int64 {
	i := 0
	for i < len(r.b) && (r.b[i] == '-' || (r.b[i] >= '0' && r.b[i] <= '9')) {
		i++
	}
	v, err := strconv.ParseInt(string(r.b[:i]), 10, 64)
	r.ok = r.ok && err == nil
	r.b = r.b[i:]
	return v
}

// str reads up to the closing quote of a string without escapes.
func (r *lineReader) str() string {
	i := bytes.IndexByte(r.b, '"')
	if r.ok = r.ok && i >= 0 && bytes.IndexByte(r.b[:i], '\\') < 0; !r.ok {
		return ""
	}
	s := string(r.b[:i])
	r.b = r.b[i+1:]
	return s
}

// ackedPoll is the lab's comparison of the acknowledged records with the
// topic (its goroutine only).
type ackedPoll struct {
	tail   ackedTail
	check  *audit.AckCheck
	last   audit.AckSummary
	sentAt time.Time
	errSet string
}

// pollAcked reads what the producer logged since the last poll and sets
// every record not settled yet against the audit's latest read.
func (l *Lab) pollAcked(_ context.Context, a *ackedPoll) {
	asked := time.Now()
	var err error
	if a.check.Pending() < ackedBacklog {
		var recs []audit.Acked
		var gaps []audit.AckGap
		recs, gaps, err = a.tail.read()
		// A gap's marker comes before the records after it; the order
		// within one read does not matter to the check.
		for _, g := range gaps {
			a.check.AddGap(g)
		}
		a.check.Add(recs...)
	}
	sum := a.check.Check(l.auditor.Snapshot())
	if err != nil {
		if msg := err.Error(); msg != a.errSet {
			a.errSet = msg
			l.log.Warn("reading the acknowledged-records log failed", "path", a.tail.path, "err", err)
		}
		l.emit(board.AckedCheck{At: asked, Err: fmt.Errorf("the producer's log of acknowledged records: %w", err)})
		return
	}
	a.errSet = ""
	same := sum.Acknowledged == a.last.Acknowledged && sum.Held == a.last.Held && len(sum.Gaps) == len(a.last.Gaps) &&
		sum.Pending == a.last.Pending && sum.PendingUnplaced == a.last.PendingUnplaced && len(sum.Missing) == len(a.last.Missing)
	if same && asked.Sub(a.sentAt) < ackedQuiet {
		return
	}
	a.last, a.sentAt = sum, asked
	l.emit(ackedInput(asked, sum))
}

// ackedInput is a check's summary in the board's terms.
func ackedInput(at time.Time, s audit.AckSummary) board.AckedCheck {
	in := board.AckedCheck{At: at, Acknowledged: s.Acknowledged, Pending: s.Pending, Unchecked: s.Unchecked,
		Unconfirmed: s.Unconfirmed, PendingUnplaced: s.PendingUnplaced,
		Latest: make(map[int32]board.AckedRecord, len(s.Latest)), EarlierRound: make(map[int32]board.AckedRecord, len(s.EarlierRound))}
	for _, g := range s.Gaps {
		in.Gaps = append(in.Gaps, boardGap(g))
	}
	for _, r := range s.Missing {
		in.Missing = append(in.Missing, boardAcked(r))
	}
	for p, r := range s.Latest {
		in.Latest[p] = boardAcked(r)
	}
	for p, r := range s.EarlierRound {
		in.EarlierRound[p] = boardAcked(r)
	}
	return in
}

func boardAcked(r audit.Acked) board.AckedRecord {
	return board.AckedRecord{Partition: r.Partition, Offset: r.Offset, Sensor: r.Key, Timestamp: r.Timestamp, Acks: r.Acks}
}

func boardGap(g audit.AckGap) board.AckedGap {
	out := board.AckedGap{Count: g.Count, From: g.From, To: g.To, Err: g.Err}
	for _, p := range g.Partitions {
		out.Partitions = append(out.Partitions, board.AckedGapPartition{Partition: p.Partition, FirstOffset: p.FirstOffset, LastOffset: p.LastOffset, Count: p.Count})
	}
	return out
}
