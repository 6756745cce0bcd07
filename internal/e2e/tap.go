package e2e

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// Tap watches a run from outside the dashboard, with clients of its own:
// it reads the topic from its start as records arrive (so it keeps what
// retention deletes later), reads each partition's log start, and reads
// where consumer-usage's records in the store came from. It is the
// independent side of a test that checks what the dashboard names.
type Tap struct {
	stop chan struct{}
	done chan struct{}

	mu         sync.Mutex
	records    []Record
	logStart   map[int32]int64
	sources    map[string][]store.RecordSource
	storeReads int
	err        error
}

// TapResult is what a Tap saw by the time it stopped.
type TapResult struct {
	// Topic holds every record the tap read, by partition then offset.
	Topic Topic
	// LogStart is each partition's last log start offset read.
	LogStart map[int32]int64
	// Sources is the store's last answer: where each usage record came from.
	Sources map[string][]store.RecordSource
	// StoreReads counts the store's answers.
	StoreReads int
	// Err is the first error before the tap had read anything, if any: a
	// broker or store that never answered.
	Err error
}

// tapEvery is how often the tap reads the log starts and the store: the
// lab's own polls are 500 ms apart.
const tapEvery = 250 * time.Millisecond

// StartTap starts reading topic on brokers and the store at mongoURI.
// Stop ends it; errors once the run's broker and store are gone are
// expected and not reported.
func StartTap(brokers, topic, mongoURI string) *Tap {
	tp := &Tap{stop: make(chan struct{}), done: make(chan struct{}), logStart: map[int32]int64{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); tp.readTopic(brokers, topic) }()
	go func() { defer wg.Done(); tp.readStore(mongoURI) }()
	go func() { wg.Wait(); close(tp.done) }()
	return tp
}

// Stop ends the tap and returns what it saw.
func (tp *Tap) Stop() TapResult {
	close(tp.stop)
	<-tp.done
	tp.mu.Lock()
	defer tp.mu.Unlock()
	recs := append([]Record(nil), tp.records...)
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		return a.Partition < b.Partition || (a.Partition == b.Partition && a.Offset < b.Offset)
	})
	return TapResult{Topic: Topic{Records: recs}, LogStart: tp.logStart, Sources: tp.sources,
		StoreReads: tp.storeReads, Err: tp.err}
}

func (tp *Tap) stopped() bool {
	select {
	case <-tp.stop:
		return true
	default:
		return false
	}
}

func (tp *Tap) fail(err error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.err == nil {
		tp.err = err
	}
}

// readTopic assigns every partition from its start and reads until
// stopped, reading the log starts between polls.
func (tp *Tap) readTopic(brokers, topic string) {
	// Its log lines come on a channel it drops: the run's broker is gone
	// before the tap stops, and librdkafka would print each failed connect.
	cfg := kafkacfg.LogsToChannel(kafkacfg.Audit(brokers, kafkacfg.AuditGroupPrefix+"tap-"+RandomSuffix()))
	c, err := kafka.NewConsumer(cfg)
	if err != nil {
		tp.fail(fmt.Errorf("tap: reader: %w", err))
		return
	}
	go func() {
		for range c.Logs() {
		}
	}()
	defer c.Close()
	var partitions []int32
	for len(partitions) == 0 && !tp.stopped() {
		md, err := c.GetMetadata(&topic, false, 2000)
		if err == nil && md.Topics[topic].Error.Code() == kafka.ErrNoError {
			for _, p := range md.Topics[topic].Partitions {
				partitions = append(partitions, p.ID)
			}
		}
		if len(partitions) == 0 {
			time.Sleep(tapEvery) // the lab creates the topic as it starts
		}
	}
	var assign []kafka.TopicPartition
	for _, p := range partitions {
		assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(assign); err != nil {
		tp.fail(fmt.Errorf("tap: assign: %w", err))
		return
	}
	nextStarts := time.Now()
	for !tp.stopped() {
		if time.Now().After(nextStarts) {
			for _, p := range partitions {
				if low, _, err := c.QueryWatermarkOffsets(topic, p, 1000); err == nil {
					tp.mu.Lock()
					tp.logStart[p] = max(tp.logStart[p], low)
					tp.mu.Unlock()
				}
			}
			nextStarts = time.Now().Add(tapEvery)
		}
		if m, ok := c.Poll(50).(*kafka.Message); ok && m.TopicPartition.Error == nil {
			tp.mu.Lock()
			tp.records = append(tp.records, Record{Partition: m.TopicPartition.Partition,
				Offset: int64(m.TopicPartition.Offset), Key: m.Key, Value: m.Value})
			tp.mu.Unlock()
		}
	}
}

// readStore reads where consumer-usage's records came from until stopped,
// keeping the last answer.
func (tp *Tap) readStore(uri string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	st, err := store.Connect(ctx, uri)
	cancel()
	if err != nil {
		tp.fail(fmt.Errorf("tap: store: %w", err))
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = st.Close(ctx)
	}()
	for !tp.stopped() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		sources, err := st.UsageOffsets(ctx)
		cancel()
		if err == nil {
			tp.mu.Lock()
			tp.sources = sources
			tp.storeReads++
			tp.mu.Unlock()
		}
		select {
		case <-tp.stop:
		case <-time.After(tapEvery):
		}
	}
}
