package producer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// AckedFlushEvery is how often the acknowledged-records log is written out:
// lines are buffered in between (a history burst acknowledges a hundred
// thousand records a second), so a SIGKILL loses at most this much of the
// log, never a record of the topic.
const AckedFlushEvery = 200 * time.Millisecond

// ackedBuffer is the log's write buffer: a history burst fills it many
// times a second, the telemetry's rate once in minutes.
const ackedBuffer = 64 << 10

// AckedRecord is one line of the acknowledged-records log (--acked-log,
// acked.ndjson in the dashboard's run directory): a record of the
// telemetry whose delivery report came without an error, where the broker
// said it stored it, its key, the message's own timestamp field (epoch ms,
// as in its JSON value) and the acks setting it was produced with ("1" or
// "all"). The malformed records inject-bad publishes are not in it: they
// have no timestamp to be found by.
type AckedRecord struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       string `json:"key"`
	Timestamp int64  `json:"timestamp"`
	Acks      string `json:"acks"`
}

// ackedLog appends AckedRecords to a file, buffered; nil logs nothing.
// Safe for concurrent use: the delivery reports write it, the publishing
// loop flushes it.
type ackedLog struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	line []byte
	// err is the first write error; the log stops there (said once).
	err error
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
	return &ackedLog{f: f, w: bufio.NewWriterSize(f, ackedBuffer)}, nil
}

// add appends one acknowledged record.
func (a *ackedLog) add(partition int32, offset int64, key []byte, timestamp int64, acks lesson.Acks) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return
	}
	a.line = appendAcked(a.line[:0], partition, offset, key, timestamp, acks)
	_, a.err = a.w.Write(a.line)
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

// flush writes the buffered lines out; the first error stops the log.
func (a *ackedLog) flush() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.err = a.w.Flush()
	return a.err
}

// close flushes and closes the file.
func (a *ackedLog) close() error {
	if a == nil {
		return nil
	}
	err := a.flush()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}
