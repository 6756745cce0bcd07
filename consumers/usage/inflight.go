package usage

import (
	"context"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// finishGrace is how long a stop lets the message in hand finish its
// writes; the dashboard's supervisor SIGKILLs 6 s after its SIGTERM.
const finishGrace = 3 * time.Second

// finishing is the context a message is applied in: a stop does not cancel
// it at once but finishGrace later. A write cancelled in flight may still
// land on the server without the writes that follow it, so a graceful stop
// that cut a message short would leave half of its effect behind (a guarded
// usage record without its checkpoint, which the next consumer applies
// again).
func finishing(stop context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(stop))
	unregister := context.AfterFunc(stop, func() { time.AfterFunc(grace, cancel) })
	return ctx, func() { unregister(); cancel() }
}

// inFlight is a batch whose store writes run on their own goroutine while
// the loop keeps polling: a rebalance is served while a write is held or
// slow, as a real consumer's is, so a partition can be revoked with its
// write still in flight.
type inFlight struct {
	done   chan batchResult
	result *batchResult
	mu     sync.Mutex
	// revoked: partitions revoked while the batch was in flight; their
	// writes complete late and their offsets are not stored.
	revoked map[int32]bool
	// parts: messages of the batch per partition.
	parts map[int32]int
}

type batchResult struct {
	results []Result
	err     error
}

// revoke marks parts lost and returns how many of the batch's messages
// are in them (0 once the batch is done: nothing is in flight then).
func (f *inFlight) revoke(parts []int32) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.result != nil {
		return 0
	}
	var n int64
	for _, p := range parts {
		f.revoked[p] = true
		n += int64(f.parts[p])
	}
	return n
}

func (f *inFlight) lost(p int32) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.revoked[p]
}

// owns is the processor's Owned: false for a partition revoked while the
// current batch was in flight.
func (k *kafkaLoop) owns(p int32) bool {
	f := k.flight
	return f == nil || !f.lost(p)
}

// launch starts HandleBatch on its own goroutine.
func (k *kafkaLoop) launch(ctx context.Context, recs []Record) *inFlight {
	f := &inFlight{done: make(chan batchResult, 1), revoked: map[int32]bool{}, parts: map[int32]int{}}
	for _, r := range recs {
		f.parts[r.Partition]++
	}
	k.flight = f
	go func() {
		results, err := k.proc.HandleBatch(ctx, recs)
		f.done <- batchResult{results: results, err: err}
	}()
	return f
}

// inFlightPoll is how often the loop polls while a batch is in flight:
// rebalance callbacks are served within it.
const inFlightPoll = 50 * time.Millisecond

// await waits for f, polling meanwhile: rebalance callbacks run (a revoke
// marks f's partitions lost; an assign waits for f first, see rebalance),
// messages are held for the next batch, errors are handled (a fatal one is
// returned once f is done). Nothing of the processor is touched here while
// f runs.
func (k *kafkaLoop) await(f *inFlight) batchResult {
	t := time.NewTimer(inFlightPoll)
	defer t.Stop()
	for f.result == nil {
		select {
		case r := <-f.done:
			f.result = &r
			continue
		case <-t.C:
			t.Reset(inFlightPoll)
		}
		switch e := k.consumer.Poll(0).(type) {
		case *kafka.Message:
			k.held = append(k.held, e)
		case kafka.Error:
			if err := k.kafkaError(e); err != nil && k.fatal == nil {
				k.fatal = err
			}
		case kafka.OffsetsCommitted:
			k.committedEvent(e)
		}
	}
	k.flight = nil
	return *f.result
}

// settle waits for the batch in flight, if any, without polling (an
// assignment reloads the processor's checkpoints, which the batch's
// goroutine is still using) and returns how long it waited.
func (k *kafkaLoop) settle() time.Duration {
	f := k.flight
	if f == nil || f.result != nil {
		return 0
	}
	began := time.Now()
	r := <-f.done
	f.result = &r
	return time.Since(began)
}
