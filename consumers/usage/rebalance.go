package usage

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// rebalance is called by librdkafka inside Poll (and Close). An assignment
// is applied here, so its partitions' pause can follow backpressure; a
// revoke's Unassign is left to the Go client, after it returns.
func (k *kafkaLoop) rebalance(c *kafka.Consumer, ev kafka.Event) error {
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		k.brokerBack()
		// The rebalance as this member saw it: from its revoke to this
		// assignment, before any wait of its own below.
		var took time.Duration
		if !k.revokedAt.IsZero() {
			took, k.revokedAt = time.Since(k.revokedAt), time.Time{}
		}
		// A batch still in flight uses the processor: let it finish
		// before the checkpoints are reloaded. Its writes to partitions
		// revoked meanwhile complete late.
		if waited := k.settle(); waited > 0 {
			k.log.Info("assignment waited for the batch in flight", "waited", waited.Round(time.Millisecond))
		}
		parts := partitionIDs(e.Partitions)
		member, generation := groupMember(c)
		k.log.Info("partitions assigned", "partitions", parts, "member", member, "generation", generation,
			"rebalance", took.Round(time.Millisecond))
		if k.guarded() {
			// Another consumer may have owned these partitions and advanced
			// their sensors' checkpoints: start from what is durable.
			if err := k.proc.Load(k.ctx); err != nil {
				k.log.Warn("reload checkpoints on assign", "error", err)
			}
		}
		start, uncommitted := k.startPositions(e.Partitions)
		redelivered := k.redelivered(start)
		if k.guarded() {
			// Guarded mode does not let librdkafka pick where to start: it
			// assigns the offsets it will judge gaps against, so a start
			// the client moved (an offset reset after a broker restart)
			// cannot pass unseen.
			if err := c.Assign(k.explicitStart(e.Partitions, start)); err != nil {
				k.log.Warn("assign at explicit offsets", "error", err)
			}
			k.pinStart(c, start, uncommitted)
		} else {
			// Naive lets the client start at the commits, as the seed's
			// consumer does. Where there are none, it starts at the
			// watermark it read for auto.offset.reset: left to the client,
			// "latest" is the end a moment later, past what it reports as
			// its start.
			if err := c.Assign(k.explicitStart(e.Partitions, onlyUncommitted(start, uncommitted))); err != nil {
				k.log.Warn("assign", "error", err)
			}
		}
		k.pausedAsBackpressureSays(e.Partitions)
		for p, off := range start {
			k.positions[p] = off
		}
		k.health.Assign(time.Now(), k.positions)
		if redelivered > 0 || k.firstAssign {
			k.log.Info("messages processed before will be delivered again", "count", redelivered, "start", start)
		}
		startAt := make([]status.Position, 0, len(parts))
		for _, p := range parts {
			startAt = append(startAt, status.Position{Partition: p, Offset: start[p], HighWatermark: -1})
		}
		k.em.Emit(status.Event{Type: status.Assigned, Partitions: parts, Redelivered: redelivered, First: k.firstAssign,
			Member: member, Generation: generation, Positions: startAt, Millis: took.Milliseconds()})
		k.firstAssign = false
	case kafka.RevokedPartitions:
		parts := partitionIDs(e.Partitions)
		member, generation := groupMember(c)
		k.revokedAt = time.Now()
		var inFlight int64
		if f := k.flight; f != nil {
			k.proc.Fence(func() { inFlight = f.revoke(parts) })
		}
		k.em.Emit(status.Event{Type: status.Revoked, Partitions: parts, Member: member, Generation: generation, InFlight: inFlight})
		k.log.Info("partitions revoked", "partitions", parts, "lost", c.AssignmentLost(), "member", member,
			"generation", generation, "in_flight", inFlight)
		if !c.AssignmentLost() {
			// Hand over exactly what is done: offsets are stored only once
			// a batch's writes completed, so this is the contiguous
			// completed prefix, never the writes still in flight. (Naive
			// mode commits what its store holds every second anyway.)
			k.commitStored("revoke")
		}
		for _, p := range parts {
			delete(k.positions, p)
		}
		inParts := func(m *kafka.Message) bool { return slices.Contains(parts, m.TopicPartition.Partition) }
		k.batch = slices.DeleteFunc(k.batch, inParts)
		k.held = slices.DeleteFunc(k.held, inParts)
		k.health.Revoke(time.Now(), parts)
	}
	return nil
}

// groupMember is the consumer's group member id and generation, read from
// its group metadata ("", -1 when unknown). librdkafka exposes them only
// serialized (for transactions): "CGMDv2:", the generation as a native
// int32, then the NUL-terminated group id and member id.
func groupMember(c *kafka.Consumer) (member string, generation int32) {
	md, err := c.GetConsumerGroupMetadata()
	if err != nil || md == nil {
		return "", -1
	}
	return parseGroupMetadata(md)
}

// parseGroupMetadata reads the member id and generation out of
// kafka.ConsumerGroupMetadata ("", -1 when it is not in the known form).
func parseGroupMetadata(md *kafka.ConsumerGroupMetadata) (member string, generation int32) {
	// No accessor: the bytes are read by reflection (reading an unexported
	// slice is allowed; only Interface and Set are not).
	v := reflect.ValueOf(md).Elem().FieldByName("serialized")
	if !v.IsValid() || v.Kind() != reflect.Slice {
		return "", -1
	}
	member, generation, ok := parseCGMD(v.Bytes())
	if !ok {
		return "", -1
	}
	return member, generation
}

// parseCGMD decodes "CGMDv2:", the generation (native int32), the group
// id and the member id (both NUL-terminated); the instance id after them
// is not needed.
func parseCGMD(b []byte) (member string, generation int32, ok bool) {
	if len(b) < len(cgmdMagic)+4 || string(b[:len(cgmdMagic)]) != cgmdMagic {
		return "", 0, false
	}
	b = b[len(cgmdMagic):]
	generation = int32(binary.NativeEndian.Uint32(b[:4]))
	_, rest, ok := bytes.Cut(b[4:], []byte{0}) // the group id
	if !ok {
		return "", 0, false
	}
	id, _, ok := bytes.Cut(rest, []byte{0})
	if !ok {
		return "", 0, false
	}
	return string(id), generation, true
}

// cgmdMagic starts librdkafka's serialized consumer group metadata.
const cgmdMagic = "CGMDv2:"
