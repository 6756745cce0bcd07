package producer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// ackedBuffer bounds the lines held between two flushes: a history burst
// writes them out many times a second, the telemetry's rate once in
// minutes.
const ackedBuffer = 64 << 10

// AckedFlushEvery is how often the acknowledged-records log is written out:
// lines are buffered in between (a history burst acknowledges a hundred
// thousand records a second), so a SIGKILL loses at most this much of the
// log, never a record of the topic.
const AckedFlushEvery = 200 * time.Millisecond

// AckedRecord is one line of the acknowledged-records log (--acked-log,
// acked.ndjson in the dashboard's run directory): a record of the
// telemetry whose delivery report came without an error, where the broker
// said it stored it, its key, the message's own timestamp field (epoch ms,
// as in its JSON value) and the acks setting it was produced with ("all",
// "1" or "0"). With acks=0 the broker confirms nothing: the line says the
// record was sent, and its offset is UnknownOffset. The malformed records
// inject-bad publishes are not in it: they have no timestamp to be found
// by.
type AckedRecord struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       string `json:"key"`
	Timestamp int64  `json:"timestamp"`
	Acks      string `json:"acks"`
}

// UnknownOffset is the offset of a record sent with acks=0. librdkafka's
// report of one carries no offset: the first record of a batch reports
// -1001 (kafka.OffsetInvalid) and the next ones count up from it, so a
// batch of over a thousand reports offsets from 0 on that the broker never
// gave.
const UnknownOffset = -1

// ackedLog appends AckedRecords to a file, buffered; nil logs nothing.
// Safe for concurrent use: the delivery reports add to it, the publishing
// loop flushes it. A write that fails (a full disk) loses no count: the
// records it could not write join the gap (ackedGap), retried at every
// flush, and the gap is written as a marker line the moment a write
// succeeds again; a cut line is cut back off.
type ackedLog struct {
	mu sync.Mutex
	f  *os.File
	// size: the file's length as this log left it (to cut a torn write
	// back to).
	size int64
	// buf: lines not written yet; pend: the records in buf, in order.
	buf  []byte
	pend []pendingAck
	gap  ackedGap
	// torn: a cut line could not be cut off: the next write starts with a
	// newline so that it stays a line of its own.
	torn    bool
	failing bool
	// noted: what the writes add made itself did, for the next flush to
	// say.
	noted ackedFlush
}

// pendingAck is a record of buf: where it was stored, when it was
// acknowledged, and where its line ends in buf.
type pendingAck struct {
	partition int32
	offset    int64
	at        time.Time
	end       int
}

// openAckedLog opens path for appending, creating it and its directory.
func openAckedLog(path string) (*ackedLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("acked log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("acked log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("acked log: %w", err)
	}
	// A log that ends in a cut line (a producer killed mid-write, a full
	// disk) gets its next line on a line of its own.
	return &ackedLog{f: f, size: st.Size(), torn: endsCut(f, st.Size())}, nil
}

// endsCut reports whether the file of size bytes does not end in a newline.
func endsCut(f *os.File, size int64) bool {
	if size == 0 {
		return false
	}
	r, err := os.Open(f.Name())
	if err != nil {
		return true
	}
	defer r.Close()
	var last [1]byte
	_, err = r.ReadAt(last[:], size-1)
	return err != nil || last[0] != '\n'
}

// add appends one acknowledged record.
func (a *ackedLog) add(partition int32, offset int64, key []byte, timestamp int64, acks lesson.Acks) {
	if a == nil {
		return
	}
	at := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf = appendAcked(a.buf, partition, offset, key, timestamp, acks)
	a.pend = append(a.pend, pendingAck{partition: partition, offset: offset, at: at, end: len(a.buf)})
	if len(a.buf) >= ackedBuffer {
		out := a.flushLocked()
		a.noted.Failed = a.noted.Failed || out.Failed
		a.noted.Err = cmp.Or(out.Err, a.noted.Err)
		if out.Written != nil {
			a.noted.Written = out.Written
		}
	}
}

// appendAcked is AckedRecord's JSON line, written without reflection (one
// per acknowledged record).
func appendAcked(b []byte, partition int32, offset int64, key []byte, timestamp int64, acks lesson.Acks) []byte {
	b = append(b, `{"partition":`...)
	b = strconv.AppendInt(b, int64(partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, offset, 10)
	b = append(b, `,"key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, timestamp, 10)
	b = append(b, `,"acks":"`...)
	b = append(b, acks...)
	return append(b, "\"}\n"...)
}

// appendJSONString quotes s as JSON: as it is when it is plain printable
// ASCII (every sensor id), through encoding/json otherwise.
func appendJSONString(b, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(string(s))
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// ackedFlush is what a flush did: Err, the write error (nil: all
// written); Failed, the log failed where it wrote before; Written, a gap
// just written down as a marker line (nil: none).
type ackedFlush struct {
	Err     error
	Failed  bool
	Written *AckedGap
}

// flush writes the buffered lines out, after the marker of a gap when
// there is one. On an error, the lines written whole stay, a cut one is
// cut back off, and every record not written joins the gap.
func (a *ackedLog) flush() ackedFlush {
	if a == nil {
		return ackedFlush{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out, noted := a.flushLocked(), a.noted
	a.noted = ackedFlush{}
	out.Failed = out.Failed || noted.Failed
	if out.Failed && out.Err == nil {
		out.Err = noted.Err
	}
	if out.Written == nil {
		out.Written = noted.Written
	}
	return out
}

func (a *ackedLog) flushLocked() ackedFlush {
	if len(a.buf) == 0 && a.gap.count == 0 {
		return ackedFlush{}
	}
	data, marker := a.withHead()
	n, err := a.f.Write(data)
	whole := a.keepWhole(data, n, err)
	var out ackedFlush
	if whole >= marker && a.gap.count > 0 {
		g := a.gap.report()
		out.Written = &g
		a.gap = ackedGap{}
	}
	if err != nil {
		for _, r := range a.pend {
			if marker+r.end > whole {
				a.gap.add(r)
			}
		}
		a.gap.err = err
		out.Err, out.Failed = err, !a.failing
	}
	a.failing = err != nil
	a.buf, a.pend = a.buf[:0], a.pend[:0]
	return out
}

// withHead is buf after what must come first: a newline ending a cut line,
// the gap's marker; marker is their length.
func (a *ackedLog) withHead() (data []byte, marker int) {
	if a.gap.count == 0 && !a.torn {
		return a.buf, 0
	}
	var head []byte
	if a.torn {
		head = append(head, '\n')
	}
	if a.gap.count > 0 {
		head = appendGapLine(head, a.gap.report())
	}
	return append(head, a.buf...), len(head)
}

// keepWhole settles a write of data that wrote n bytes: a cut line is cut
// back off (else the next write ends it); it returns how many bytes of
// data the file keeps.
func (a *ackedLog) keepWhole(data []byte, n int, err error) int {
	whole, cutStays := n, false
	if err != nil {
		whole = bytes.LastIndexByte(data[:n], '\n') + 1
		if n > whole && a.f.Truncate(a.size+int64(whole)) != nil {
			whole, cutStays = n, true
		}
	}
	a.size += int64(whole)
	a.torn = cutStays || (a.torn && whole == 0)
	return whole
}

// close flushes and closes the file; a gap it could not write down is an
// error that says how many records it holds.
func (a *ackedLog) close() error {
	if a == nil {
		return nil
	}
	out := a.flush()
	err := out.Err
	if err != nil {
		g := a.gap.report()
		err = fmt.Errorf("%d acknowledged records not logged between %s and %s: %w",
			g.Count, g.From.Format(time.TimeOnly), g.To.Format(time.TimeOnly), err)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// flushAcked writes the acknowledged-records log out. It says when the log
// fails (an event, so the board has the producer's last error, and its
// own log) and when it is written again, with the records it could not
// list: the publishing goes on either way.
func (pub *publisher) flushAcked() {
	out := pub.acked.flush()
	if g := out.Written; g != nil {
		pub.log.Warn("acknowledged-records log written again; a marker line names the records it could not list",
			"path", pub.cfg.AckedLog, "not_logged", g.Count, "from", g.From, "to", g.To)
	}
	if out.Failed {
		pub.log.Error("acknowledged-records log not written; counting the acks it cannot list, retrying at every flush",
			"path", pub.cfg.AckedLog, "err", out.Err)
		pub.em.Emit(status.Event{Type: status.AckedLogFailed, Error: "acknowledged-records log not written: " + out.Err.Error()})
	}
}
