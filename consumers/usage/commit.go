package usage

import (
	"errors"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// commitStored commits the offsets stored so far. A commit the group
// rejects because this member lost its partitions is a failure, never
// progress: the next owner starts from the last commit that was accepted
// and replays the rest (guarded: the effects' identities refuse them).
func (k *kafkaLoop) commitStored(why string) {
	_, err := k.consumer.Commit()
	var kerr kafka.Error
	switch {
	case err == nil, errors.As(err, &kerr) && kerr.Code() == kafka.ErrNoOffset:
	case errors.As(err, &kerr) && lostOwnership(kerr.Code()):
		k.commitRejected(why, err)
	default:
		k.log.Warn("commit stored offsets", "when", why, "error", err)
	}
}

// commitRejected reports a commit the group refused for lost ownership.
func (k *kafkaLoop) commitRejected(why string, err error) {
	k.log.Warn("commit rejected: this member no longer owns the partitions; the next owner replays from the last accepted commit",
		"when", why, "error", err)
	k.em.Emit(status.Event{Type: status.CommitRejected, Reason: why, Error: err.Error()})
}

// committedEvent takes librdkafka's report of a commit (the auto commits
// every second): one refused for lost ownership is reported, never taken
// as progress (nothing here reads progress from commits).
func (k *kafkaLoop) committedEvent(e kafka.OffsetsCommitted) {
	var kerr kafka.Error
	if e.Error != nil && errors.As(e.Error, &kerr) && lostOwnership(kerr.Code()) {
		k.commitRejected("auto", e.Error)
	}
}

// lostOwnership: the commit was refused because the member or generation
// it was made under is no longer the group's.
func lostOwnership(code kafka.ErrorCode) bool {
	switch code {
	case kafka.ErrIllegalGeneration, kafka.ErrUnknownMemberID, kafka.ErrRebalanceInProgress, kafka.ErrFencedInstanceID:
		return true
	}
	return false
}
