package usage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// backpressure is consumer-usage's "store down or slow" state.
type backpressure struct {
	mu     sync.Mutex
	since  time.Time // zero: not in backpressure
	reason string
}

// Backpressure. While the store is down or slow, consumer-usage takes no
// new message: the batch in hand (one at a time, processing is
// sequential) keeps being retried inside HandleBatch, and as soon as a store
// call fails or has not answered within --store-slow, every assigned
// partition is paused, so librdkafka stops fetching and Poll hands out
// nothing new. Between pings the loop keeps polling (rebalances, errors,
// max.poll.interval.ms); only the batch in hand blocks polling while
// its writes are retried. The partitions are resumed, from the position
// after the last message handled, once a ping answers within
// --store-slow.

// storeTrouble enters (or re-describes) backpressure; any goroutine.
func (k *kafkaLoop) storeTrouble(reason string) {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	now := time.Now()
	if !k.bp.since.IsZero() && troubleKind(k.bp.reason) == troubleKind(reason) {
		return
	}
	if k.bp.since.IsZero() {
		k.bp.since = now
	}
	k.bp.reason = reason
	parts := k.pauseAll()
	k.em.Emit(status.Event{Type: status.Backpressure, Reason: reason, Partitions: parts,
		Millis: now.Sub(k.bp.since).Milliseconds()})
	k.log.Warn("backpressure: not taking new messages", "reason", reason, "paused", parts)
}

// troubleKind is "store unreachable" or "store slow".
func troubleKind(reason string) string {
	kind, _, _ := strings.Cut(reason, ":")
	return kind
}

func (k *kafkaLoop) inBackpressure() bool {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	return !k.bp.since.IsZero()
}

// pauseAll pauses every assigned partition (again: a rebalance may have
// assigned new ones) and returns them.
func (k *kafkaLoop) pauseAll() []int32 {
	tps, err := k.consumer.Assignment()
	if err != nil || len(tps) == 0 {
		return nil
	}
	if err := k.consumer.Pause(tps); err != nil {
		k.log.Warn("pause partitions", "error", err)
	}
	return partitionIDs(tps)
}

// pingTimeout bounds one health ping while backpressure lasts; the driver
// gives up on an unreachable server after 3 s (store.Connect).
const pingTimeout = 5 * time.Second

// awaitStore keeps the partitions paused and pings the store until it
// answers within --store-slow, then resumes them.
func (k *kafkaLoop) awaitStore(tick *time.Ticker) error {
	limit := k.proc.cfg.SlowAfter
	next := time.Now()
	for k.ctx.Err() == nil {
		if !time.Now().Before(next) {
			ctx, cancel := context.WithTimeout(k.ctx, pingTimeout)
			began := time.Now()
			err := k.st.Ping(ctx)
			took := time.Since(began)
			cancel()
			switch {
			case k.ctx.Err() != nil:
				return nil
			case err == nil && took <= limit:
				k.endBackpressure()
				return nil
			case errors.Is(err, context.DeadlineExceeded):
				k.storeTrouble(fmt.Sprintf("store slow: ping not answered within %s", pingTimeout))
			case err != nil:
				k.storeTrouble("store unreachable: ping: " + err.Error())
			default:
				k.storeTrouble(fmt.Sprintf("store slow: ping took %s, limit %s", took.Round(time.Millisecond), limit))
			}
			k.pauseAll()
			next = time.Now().Add(500 * time.Millisecond)
		}
		if err := k.pollOnce(tick); err != nil {
			return err
		}
	}
	return nil
}

// pausedAsBackpressureSays pauses newly assigned partitions while
// backpressure lasts and resumes them otherwise. librdkafka keeps a
// partition's pause across a revoke and a new assignment, so a
// backpressure that ended while the partitions were being reassigned would
// otherwise leave them paused for good.
func (k *kafkaLoop) pausedAsBackpressureSays(tps []kafka.TopicPartition) {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	if len(tps) == 0 {
		return
	}
	if !k.bp.since.IsZero() {
		if err := k.consumer.Pause(tps); err != nil {
			k.log.Warn("pause partitions", "error", err)
		}
		return
	}
	if err := k.consumer.Resume(tps); err != nil {
		k.log.Warn("resume partitions", "error", err)
	}
}

func (k *kafkaLoop) endBackpressure() {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	if k.bp.since.IsZero() {
		return
	}
	took := time.Since(k.bp.since)
	k.bp.since, k.bp.reason = time.Time{}, ""
	if tps, err := k.consumer.Assignment(); err == nil && len(tps) > 0 {
		if err := k.consumer.Resume(tps); err != nil {
			k.log.Warn("resume partitions", "error", err)
		}
	}
	k.em.Emit(status.Event{Type: status.BackpressureEnded, Millis: took.Milliseconds()})
	k.log.Info("backpressure ended: taking messages again", "lasted", took.Round(time.Millisecond))
}
