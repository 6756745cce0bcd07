package current

import (
	"fmt"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// A replay is read by one librdkafka handle per partition (up to
// maxReaders), each polled, decoded and judged on its own goroutine: a
// handle's Poll costs a cgo call and copies per message, and one handle
// fetches one request at a time. The group member (the handle that
// subscribes: a fresh group, earliest, no commits) reads nothing while it
// replays; its rebalance callback hands its partitions to the readers,
// which only Assign (they never join the group). Once caught up, the
// readers close and the member reads from where they stopped: idle, four
// handles cost three times the threads, fetches and wake-ups of one.
const maxReaders = 3

// batchSize bounds a batch: it forms only while librdkafka's queue holds a
// backlog (a replay), otherwise each poll's message is applied at once.
const batchSize = 512

// startReaders creates one reader per partition, up to maxReaders, and
// runs them.
func (c *consumer) startReaders(partitions int) error {
	n := min(max(partitions, 1), maxReaders)
	for range n {
		k, err := kafka.NewConsumer(kafkacfg.CurrentReader(c.cfg.Brokers, c.cfg.GroupID, n))
		if err != nil {
			c.stopReaders()
			return fmt.Errorf("reader: %w", err)
		}
		r := newReader(c, k)
		done := make(chan struct{})
		c.readers = append(c.readers, r)
		c.readersDone = append(c.readersDone, done)
		go r.run(done)
	}
	return nil
}

// stopReaders stops the readers, applying what they polled, and closes
// their handles.
func (c *consumer) stopReaders() {
	for i, r := range c.readers {
		r.revoke(true)
		<-c.readersDone[i]
		c.closeHandle(r.k, "reader")
	}
	c.readers, c.readersDone = nil, nil
}

// handOver ends the replay's readers: the member assigns itself the
// partitions from where they stopped.
func (c *consumer) handOver(k *kafka.Consumer) {
	c.stopReaders()
	var parts []kafka.TopicPartition
	for _, pos := range c.st.progress().Positions {
		parts = append(parts, kafka.TopicPartition{Topic: &c.cfg.Topic, Partition: pos.Partition, Offset: kafka.Offset(pos.Offset)})
	}
	if err := k.Assign(parts); err != nil {
		c.log.Warn("assign after the replay", "err", err)
	}
	c.log.Info("replay readers closed; the member reads on", "partitions", len(parts))
}

// report hands a reader's error to the poll loop (dropped when the loop is
// that far behind: librdkafka repeats errors that last).
func (c *consumer) report(err error) {
	select {
	case c.errs <- err:
	default:
	}
}

// readerOf is the reader partition p goes to.
func (c *consumer) readerOf(p int32) *reader { return c.readers[int(p)%len(c.readers)] }

// assignReaders hands each reader its partitions, offsets set.
func (c *consumer) assignReaders(parts []kafka.TopicPartition) {
	each := make([][]kafka.TopicPartition, len(c.readers))
	for _, tp := range parts {
		i := int(tp.Partition) % len(c.readers)
		each[i] = append(each[i], tp)
	}
	for i, r := range c.readers {
		if err := r.assign(each[i]); err != nil {
			c.log.Warn("reader assign", "partitions", each[i], "err", err)
		}
	}
}

// reader is one handle reading some of the member's partitions.
type reader struct {
	c *consumer
	k *kafka.Consumer
	// mu is held while polled records are in hand (judged, not yet
	// applied), so a revocation or the exit can apply what was polled
	// before it. A record whose poll returns after a revocation is applied
	// too (it comes in order, next to what was applied): one dropped would
	// never come again if the poll also outlived the next assignment.
	mu      sync.Mutex
	stopped bool
	batch   []judged
	valid   map[int32]*telemetry.Validator
	parts   []int32
}

func newReader(c *consumer, k *kafka.Consumer) *reader {
	return &reader{c: c, k: k, batch: make([]judged, 0, batchSize), valid: map[int32]*telemetry.Validator{}}
}

// run polls until stop, and applies what it polled.
func (r *reader) run(done chan<- struct{}) {
	defer close(done)
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	for !r.stopped {
		switch e := r.poll().(type) {
		case *kafka.Message:
			if err := e.TopicPartition.Error; err != nil {
				r.flush()
				r.c.report(err)
				continue
			}
			p := e.TopicPartition.Partition
			v := r.valid[p]
			if v == nil {
				v = r.c.st.validator(p)
				r.valid[p] = v
			}
			r.batch = append(r.batch, r.c.st.judge(v, p, int64(e.TopicPartition.Offset), e.Key, e.Value))
			if len(r.batch) == batchSize {
				r.flush()
			}
		case kafka.Error:
			r.flush()
			r.c.report(e)
		default:
			// An empty queue applies what was polled at once, so live
			// messages are not held back.
			r.flush()
		}
	}
}

// poll returns the next event: without waiting while records are in hand
// (r.mu stays held), otherwise waiting up to 100 ms with r.mu released.
func (r *reader) poll() kafka.Event {
	if len(r.batch) > 0 {
		return r.k.Poll(0)
	}
	r.mu.Unlock()
	defer r.mu.Lock()
	return r.k.Poll(100)
}

// flush applies the batch (r.mu held) and reports it: health, invalid
// records, caught_up.
func (r *reader) flush() {
	if len(r.batch) == 0 {
		return
	}
	c := r.c
	now := time.Now()
	caughtUp, processed, targets := c.st.applyBatch(r.batch)
	c.flowing.Store(true)
	c.reportBatch(now, r.batch)
	if caughtUp {
		c.caughtUp(processed, targets)
	}
	clear(r.batch) // the keys and messages are garbage now
	r.batch = r.batch[:0]
}

// assign makes the reader fetch parts (offsets set) from now on.
func (r *reader) assign(parts []kafka.TopicPartition) error {
	r.mu.Lock()
	r.parts = r.parts[:0]
	for _, tp := range parts {
		r.parts = append(r.parts, tp.Partition)
	}
	r.mu.Unlock()
	return r.k.Assign(parts)
}

// revoke stops the reader's fetches and applies what it polled before;
// stop also ends run.
func (r *reader) revoke(stop bool) {
	if err := r.k.Unassign(); err != nil {
		r.c.log.Warn("reader unassign", "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
	r.parts = r.parts[:0]
	r.stopped = r.stopped || stop
}

// owns says whether the reader fetches partition p.
func (r *reader) owns(p int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.parts {
		if q == p {
			return true
		}
	}
	return false
}

// reportBatch feeds the health report and reports invalid records, one
// event each, for a batch just applied.
func (c *consumer) reportBatch(now time.Time, b []judged) {
	first := 0
	for i := range b {
		r := &b[i]
		if r.verdict == telemetry.Invalid {
			c.log.Warn("invalid message skipped", "partition", r.partition, "offset", r.offset, "key", string(r.key), "err", r.err)
			c.em.Emit(status.Event{Type: status.InvalidMessage, Partition: r.partition, Offset: r.offset, Error: r.err.Error()})
		}
		if i+1 < len(b) && b[i+1].partition == r.partition {
			continue
		}
		var valid, invalid int64
		last := ""
		for _, q := range b[first : i+1] {
			if q.verdict == telemetry.Invalid {
				invalid++
				last = q.err.Error()
			} else {
				valid++
			}
		}
		c.st.health.DoneUpTo(now, r.partition, r.offset, valid, invalid, last)
		first = i + 1
	}
}
