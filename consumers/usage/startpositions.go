package usage

import (
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// startPositions is where consumption of newly assigned partitions begins:
// the committed offset, else the watermark auto.offset.reset points at,
// else -1 (unknown). In guarded mode it is never past the furthest
// checkpoint of the partition: a commit ahead of every effect would skip
// messages never applied, while starting at the checkpoint only replays
// what the checkpoints and the dead-letter topic already skip.
//
// uncommitted names the partitions the group has no committed offset for
// (nil when the committed offsets could not be read; a partition the
// answer gave an error for is in neither).
func (k *kafkaLoop) startPositions(tps []kafka.TopicPartition) (start map[int32]int64, uncommitted map[int32]bool) {
	out := map[int32]int64{}
	for _, tp := range tps {
		out[tp.Partition] = -1
	}
	if committed := k.committed(tps); committed != nil {
		uncommitted = map[int32]bool{}
		for _, tp := range committed {
			switch {
			case tp.Error != nil:
				// Unknown, not absent: nothing may be pinned over it.
			case tp.Offset >= 0:
				out[tp.Partition] = int64(tp.Offset)
			default:
				uncommitted[tp.Partition] = true
			}
		}
	}
	if k.guarded() {
		through := k.proc.Through()
		for p, off := range out {
			t, ok := through[p]
			if ok && off < 0 && k.cfg.Reset != lesson.Earliest {
				// Checkpoints but no commit (a crash before the first one):
				// "latest" would jump over every message since the
				// checkpoint without applying it. Earliest re-reads them
				// anyway.
				k.log.Info("no committed offset: starting at the furthest checkpoint", "partition", p, "through", t)
				out[p] = t
				continue
			}
			if ok && off > t {
				k.log.Warn("committed offset ahead of the furthest checkpoint: starting at the checkpoint",
					"partition", p, "committed", off, "through", t, "ahead", off-t)
				out[p] = t
			}
		}
	}
	for p, off := range out {
		if off >= 0 {
			continue
		}
		low, high, err := k.consumer.QueryWatermarkOffsets(k.cfg.Conn.Topic, p, 1000)
		if err != nil {
			continue
		}
		if k.cfg.Reset == lesson.Earliest {
			out[p] = low
		} else {
			out[p] = high
		}
	}
	return out, uncommitted
}

// pinStart commits the start of every assigned partition the group has no
// commit for. "latest" is where the group first started, not wherever the
// end is at each start: without the pin, an incarnation killed before its
// first commit would make the next one start at a later end and never read
// what came in between (poison records among them would never reach the
// dead-letter topic). Committing the start claims
// nothing processed: it is the next offset to read.
func (k *kafkaLoop) pinStart(c *kafka.Consumer, start map[int32]int64, uncommitted map[int32]bool) {
	var pin []kafka.TopicPartition
	for p := range uncommitted {
		if off, ok := start[p]; ok && off >= 0 {
			pin = append(pin, kafka.TopicPartition{Topic: &k.cfg.Conn.Topic, Partition: p, Offset: kafka.Offset(off)})
		}
	}
	if len(pin) == 0 {
		return
	}
	if _, err := c.CommitOffsets(pin); err != nil {
		k.log.Warn("no committed offset: pinning the start failed", "error", err)
		return
	}
	k.log.Info("no committed offset: start pinned by a commit", "start", start)
}

// committedAttempts bounds how long an assignment waits for the committed
// offsets (each attempt up to 2 s): right after a broker restart the
// coordinator may still be loading them.
const committedAttempts = 5

// committed asks the group coordinator for the committed offsets of tps,
// retrying while it does not answer.
func (k *kafkaLoop) committed(tps []kafka.TopicPartition) []kafka.TopicPartition {
	for attempt := 1; ; attempt++ {
		committed, err := k.consumer.Committed(tps, 2000)
		if err == nil {
			return committed
		}
		if attempt == committedAttempts || k.ctx.Err() != nil {
			k.log.Warn("committed offsets unknown: the start is the client's", "error", err, "attempts", attempt)
			return nil
		}
		k.log.Info("committed offsets not answered; asking again", "error", err, "attempt", attempt)
		select {
		case <-k.ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// explicitStart is tps with the offsets of start where known; unknown
// ones (-1) are left to the client (auto.offset.reset).
func (k *kafkaLoop) explicitStart(tps []kafka.TopicPartition, start map[int32]int64) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = tp
		if off := start[tp.Partition]; off >= 0 {
			out[i].Offset = kafka.Offset(off)
		}
	}
	return out
}

// onlyUncommitted is start for the partitions the group has no commit for,
// -1 (the client's) for the others.
func onlyUncommitted(start map[int32]int64, uncommitted map[int32]bool) map[int32]int64 {
	out := map[int32]int64{}
	for p, off := range start {
		out[p] = -1
		if uncommitted[p] {
			out[p] = off
		}
	}
	return out
}

// redelivered counts the messages this consumer will be delivered again:
// per partition, those between where consumption starts (the committed
// offset) and the furthest checkpoint (what was processed before, by this
// process or an earlier one). 0 after a graceful stop, which committed
// exactly what was processed; after a kill -9, what was processed since
// the last auto commit.
func (k *kafkaLoop) redelivered(start map[int32]int64) int64 {
	through := k.proc.Through()
	var n int64
	for p, off := range start {
		if off >= 0 && through[p] > off {
			n += through[p] - off
		}
	}
	return n
}
