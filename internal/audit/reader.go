package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kgocfg"
)

// Reader tails the topic from the beginning into a Ledger.
//
// It consumes every partition directly (franz-go's ConsumePartitions, from
// the start of each log) instead of joining a group: no rebalance wait, no
// session timeout after a restart, and the audit never appears as a member
// or a committer of any group, so the lag the dashboard shows is only the
// consumers'. It is franz-go, a second implementation of the protocol
// beside the consumers' librdkafka, and pure Go: an idle reader costs the
// dashboard no cgo polls.
//
// Retention: partitions are read from the start of their logs, and the
// records read stay in the ledger when retention deletes them later. Records
// deleted before the reader got to them (a reader behind, or started on a
// log already trimmed) cannot be read: the client starts again at the log
// start, the log start is learned at every recheck and from every fetch,
// and the ledger keeps the offsets it never got (Truth.Skipped), so a
// partition is caught up at its log start and what the audit lacks is said.
// A partition whose offsets go back (a broker restarted on a fresh data
// dir) is dropped and re-read, see Ledger.Add; a dashboard that wipes the
// broker on purpose should simply start a new Reader.
type Reader struct {
	brokers, topic string
	log            *slog.Logger

	runOnce sync.Once

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
	retryBackoff = time.Second
	// New partitions (CreatePartitions) and reachability after an error are
	// checked this often: partitions added to the topic are read within
	// about a second, as the producer and the consumers see them
	// (kafkacfg.MetadataRefresh).
	recheckEvery = time.Second
)

// NewReader prepares a reader of topic at brokers; log (nil: discard) gets
// the reader's and its client's log lines. Nothing connects before Run.
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
	return &Reader{brokers: brokers, topic: topic, log: log, ledger: NewLedger()}, nil
}

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

// Run reads until ctx ends, then closes its clients and returns nil. An
// unreachable broker or a missing topic is retried (reported in
// Truth.Err), never returned. Run returns within about a second of ctx
// ending. Call it once.
func (r *Reader) Run(ctx context.Context) error {
	ran := false
	r.runOnce.Do(func() { ran = true })
	if !ran {
		return errors.New("audit: Run called twice")
	}
	// The metadata client learns the partitions; the consumer is made once
	// the first ones are known (a direct consumer needs them to exist).
	meta, err := kgo.NewClient(kgocfg.AuditMetadata(r.brokers, r.log)...)
	if err != nil {
		return fmt.Errorf("audit: client: %w", err)
	}
	defer meta.Close()
	var consumer *kgo.Client
	defer func() {
		if consumer != nil {
			consumer.Close()
		}
	}()
	admin := kadm.NewClient(meta)
	assigned := map[int32]bool{}
	var lastRecheck time.Time
	for ctx.Err() == nil {
		if consumer == nil || time.Since(lastRecheck) >= recheckEvery {
			lastRecheck = time.Now()
			c, err := r.assignNew(ctx, admin, consumer, assigned)
			if err == nil {
				r.readLogStarts(ctx, admin)
			}
			if err != nil {
				r.setErr(err)
			} else {
				r.setErr(nil)
			}
			consumer = c
			if consumer == nil {
				select {
				case <-ctx.Done():
				case <-time.After(retryBackoff):
				}
				continue
			}
		}
		pctx, cancel := context.WithTimeout(ctx, recheckEvery)
		fetches := consumer.PollFetches(pctx)
		cancel()
		r.apply(fetches)
	}
	return nil
}

// apply adds a poll's records to the ledger, with each partition's high
// watermark as the fetch answered it, and reports its errors.
func (r *Reader) apply(fetches kgo.Fetches) {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, kgo.ErrClientClosed) {
			continue
		}
		r.setErr(fmt.Errorf("audit: %s[%d]: %w", fe.Topic, fe.Partition, fe.Err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err != nil {
			return
		}
		for _, rec := range p.Records {
			r.ledger.Add(rec.Partition, rec.Offset, rec.Key, rec.Value)
			added = true
		}
		r.ledger.SetHighWatermark(p.Partition, p.HighWatermark)
		if p.LogStartOffset >= 0 {
			r.ledger.SetLogStart(p.Partition, p.LogStartOffset)
		}
	})
	if added {
		r.err = ""
		if r.read != nil {
			close(r.read)
			r.read = nil
		}
	}
}

// assignNew learns the topic's partitions and adds the ones not yet
// consumed, from the beginning of their logs, with their log ends (a
// partition that gets no records has no fetch to say it). It returns the
// consumer, made on the first partitions known (nil until then).
func (r *Reader) assignNew(ctx context.Context, admin *kadm.Client, consumer *kgo.Client, assigned map[int32]bool) (*kgo.Client, error) {
	mctx, cancel := context.WithTimeout(ctx, recheckEvery)
	defer cancel()
	md, err := admin.Metadata(mctx, r.topic)
	if err != nil {
		return consumer, fmt.Errorf("audit: metadata: %w", err)
	}
	tm, ok := md.Topics[r.topic]
	if !ok {
		return consumer, fmt.Errorf("audit: topic %s not in metadata", r.topic)
	}
	if tm.Err != nil {
		return consumer, fmt.Errorf("audit: topic %s: %w", r.topic, tm.Err)
	}
	fresh := map[int32]kgo.Offset{}
	for p := range tm.Partitions {
		if !assigned[p] {
			fresh[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(fresh) == 0 {
		if len(assigned) == 0 {
			return consumer, fmt.Errorf("audit: topic %s has no partitions", r.topic)
		}
		return consumer, nil
	}
	ends, err := admin.ListEndOffsets(mctx, r.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return consumer, fmt.Errorf("audit: log ends: %w", err)
	}
	want := map[string]map[int32]kgo.Offset{r.topic: fresh}
	if consumer == nil {
		consumer, err = kgo.NewClient(kgocfg.Audit(r.brokers, r.log, want)...)
		if err != nil {
			return nil, fmt.Errorf("audit: consumer: %w", err)
		}
	} else {
		consumer.AddConsumePartitions(want)
	}
	r.mu.Lock()
	for p := range fresh {
		assigned[p] = true
		r.ledger.Track(p)
		if end, ok := ends.Lookup(r.topic, p); ok {
			r.ledger.SetHighWatermark(p, end.Offset)
		}
	}
	r.mu.Unlock()
	r.log.Info("audit: reading topic from the beginning", "topic", r.topic, "partitions", len(assigned))
	return consumer, nil
}

// readLogStarts learns the log start of every partition: a partition whose
// records were all deleted unread gets no fetch to say it. Best effort: a
// partition that does not answer (its leader moving) is asked again at the
// next recheck, and every fetch carries its log start too; the reader's
// health is its metadata and its fetches.
func (r *Reader) readLogStarts(ctx context.Context, admin *kadm.Client) {
	lctx, cancel := context.WithTimeout(ctx, recheckEvery)
	defer cancel()
	starts, err := admin.ListStartOffsets(lctx, r.topic)
	if err != nil {
		r.log.Debug("audit: log starts not read", "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	starts.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset >= 0 {
			r.ledger.SetLogStart(o.Partition, o.Offset)
		}
	})
}
