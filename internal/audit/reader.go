package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
)

// Reader tails the topic from the beginning into a Ledger.
//
// It assigns every partition itself (Assign at OffsetBeginning) instead of
// subscribing: no group join means no rebalance wait, no session timeout
// after a restart, and the audit never appears as a member or a committer
// of any group, so the lag the dashboard shows is only the consumers'.
// librdkafka still needs a group.id to consume; it gets a fresh random one
// (kafkacfg.AuditGroupPrefix + 8 hex) that is never joined or committed.
//
// What it does not cover: partitions are read from offset 0, so a log whose
// start was deleted by retention reads as not caught up until new records
// arrive (the lab's topics are never trimmed). A partition whose offsets go
// back (a broker restarted on a fresh data dir) is dropped and re-read, see
// Ledger.Add; a dashboard that wipes the broker on purpose should simply
// start a new Reader.
type Reader struct {
	brokers, topic, groupID string
	log                     *slog.Logger

	consumer *kafka.Consumer // owned by Run
	runOnce  sync.Once

	mu     sync.Mutex
	ledger *Ledger
	err    string
	// read is closed when the next record is added, then forgotten; it
	// exists only while someone waits (SnapshotWhen), so reading costs
	// nothing extra otherwise.
	read chan struct{}
}

// Intervals of the reader's loop.
const (
	pollTimeout     = 100 * time.Millisecond
	metadataTimeout = time.Second
	retryBackoff    = time.Second
	watermarkEvery  = 250 * time.Millisecond
	// New partitions (CreatePartitions) and reachability after an error are
	// checked this often.
	recheckEvery = 5 * time.Second
)

// NewReader prepares a reader of topic at brokers; log (nil: discard) gets
// the reader's and librdkafka's log lines. Nothing connects before Run.
func NewReader(brokers, topic string, log *slog.Logger) (*Reader, error) {
	if topic == "" {
		return nil, errors.New("audit: topic is empty")
	}
	if brokers == "" {
		return nil, errors.New("audit: no brokers")
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Reader{brokers: brokers, topic: topic, log: log, ledger: NewLedger(),
		groupID: kafkacfg.AuditGroupPrefix + hex.EncodeToString(b[:])}, nil
}

// GroupID is the reader's (never joined, never committed) group id.
func (r *Reader) GroupID() string { return r.groupID }

// Snapshot returns the current truth; safe to call from any goroutine, at
// any rate (it costs O(sensors + partitions)).
func (r *Reader) Snapshot() Truth {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.ledger.Snapshot()
	t.At = time.Now()
	t.Err = r.err
	return t
}

// SnapshotWhen returns the first snapshot for which ok holds, taken as
// records are read, or the latest one when timeout passes or ctx ends
// first. The dashboard compares a usage answer with the audit once the
// audit has read as far as that answer's records: a moment's lag of the
// reader is not shown as "pending".
func (r *Reader) SnapshotWhen(ctx context.Context, timeout time.Duration, ok func(Truth) bool) Truth {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		t := r.Snapshot()
		if ok(t) {
			return t
		}
		r.mu.Lock()
		if r.read == nil {
			r.read = make(chan struct{})
		}
		read := r.read
		r.mu.Unlock()
		select {
		case <-read:
		case <-deadline.C:
			return r.Snapshot()
		case <-ctx.Done():
			return r.Snapshot()
		}
	}
}

func (r *Reader) setErr(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	r.mu.Lock()
	changed := r.err != msg
	r.err = msg
	r.mu.Unlock()
	if changed && msg != "" {
		r.log.Warn("audit: broker problem; retrying", "error", msg)
	}
}

// Run reads until ctx ends, then closes the consumer and returns nil. An
// unreachable broker or a missing topic is retried (reported in
// Truth.Err), never returned; only a fatal client error ends Run early.
// Run returns within about a second of ctx ending. Call it once.
func (r *Reader) Run(ctx context.Context) error {
	ran := false
	r.runOnce.Do(func() { ran = true })
	if !ran {
		return errors.New("audit: Run called twice")
	}
	// librdkafka's own log lines go to r.log, not to stderr: the reader
	// lives inside the dashboard, whose stderr is the terminal.
	c, err := kafka.NewConsumer(kafkacfg.LogsToChannel(kafkacfg.Audit(r.brokers, r.groupID)))
	if err != nil {
		return fmt.Errorf("audit: consumer: %w", err)
	}
	go observe.ForwardLogs(c.Logs(), r.log)
	r.consumer = c
	defer c.Close()

	assigned := map[int32]bool{}
	var lastWatermarks, lastRecheck time.Time
	for ctx.Err() == nil {
		if len(assigned) == 0 || time.Since(lastRecheck) >= recheckEvery {
			lastRecheck = time.Now()
			if err := r.assignNew(assigned); err != nil {
				r.setErr(err)
				if len(assigned) == 0 {
					select {
					case <-ctx.Done():
					case <-time.After(retryBackoff):
					}
					continue
				}
			} else {
				r.setErr(nil)
			}
		}

		switch ev := r.consumer.Poll(int(pollTimeout / time.Millisecond)).(type) {
		case *kafka.Message:
			if ev.TopicPartition.Error != nil {
				r.setErr(ev.TopicPartition.Error)
				continue
			}
			r.mu.Lock()
			r.ledger.Add(ev.TopicPartition.Partition, int64(ev.TopicPartition.Offset), ev.Key, ev.Value)
			r.err = ""
			if r.read != nil {
				close(r.read)
				r.read = nil
			}
			r.mu.Unlock()
		case kafka.Error:
			if ev.IsFatal() {
				r.setErr(ev)
				return fmt.Errorf("audit: %w", ev)
			}
			r.setErr(ev)
		}

		if time.Since(lastWatermarks) >= watermarkEvery {
			lastWatermarks = time.Now()
			r.refreshWatermarks(assigned)
		}
	}
	return nil
}

// assignNew learns the topic's partitions and adds the ones not yet
// assigned, from the beginning of their logs.
func (r *Reader) assignNew(assigned map[int32]bool) error {
	md, err := r.consumer.GetMetadata(&r.topic, false, int(metadataTimeout/time.Millisecond))
	if err != nil {
		return fmt.Errorf("audit: metadata: %w", err)
	}
	tm, ok := md.Topics[r.topic]
	if !ok {
		return fmt.Errorf("audit: topic %s not in metadata", r.topic)
	}
	if tm.Error.Code() != kafka.ErrNoError {
		return fmt.Errorf("audit: topic %s: %w", r.topic, tm.Error)
	}
	var fresh []kafka.TopicPartition
	for _, p := range tm.Partitions {
		if !assigned[p.ID] {
			fresh = append(fresh, kafka.TopicPartition{Topic: &r.topic, Partition: p.ID, Offset: kafka.OffsetBeginning})
		}
	}
	if len(fresh) == 0 {
		if len(assigned) == 0 {
			return fmt.Errorf("audit: topic %s has no partitions", r.topic)
		}
		return nil
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].Partition < fresh[j].Partition })
	if err := r.consumer.IncrementalAssign(fresh); err != nil {
		return fmt.Errorf("audit: assign: %w", err)
	}
	r.mu.Lock()
	for _, tp := range fresh {
		assigned[tp.Partition] = true
		r.ledger.Track(tp.Partition)
	}
	r.mu.Unlock()
	r.log.Info("audit: reading topic from the beginning", "topic", r.topic, "partitions", len(assigned),
		"group_id", r.groupID)
	return nil
}

// refreshWatermarks copies the high watermarks librdkafka cached from its
// fetch responses (no request is sent).
func (r *Reader) refreshWatermarks(assigned map[int32]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range assigned {
		if _, high, err := r.consumer.GetWatermarkOffsets(r.topic, p); err == nil {
			r.ledger.SetHighWatermark(p, high)
		}
	}
}
