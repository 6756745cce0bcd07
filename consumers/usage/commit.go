package usage

import (
	"errors"
	"fmt"

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
// as progress (nothing here reads progress from commits). Any other
// failure is retried at the next interval; the log says when commits
// start failing and when they work again, since the committed offsets
// (and the lag the dashboard shows) stand still meanwhile.
func (k *kafkaLoop) committedEvent(e kafka.OffsetsCommitted) {
	var kerr kafka.Error
	failed := e.Error
	if failed != nil && errors.As(failed, &kerr) && kerr.Code() == kafka.ErrNoOffset {
		return // nothing stored since the last commit
	}
	if failed != nil && errors.As(failed, &kerr) && lostOwnership(kerr.Code()) {
		k.commitRejected("auto", failed)
		return
	}
	for _, tp := range e.Offsets {
		if failed == nil && tp.Error != nil {
			failed = fmt.Errorf("partition %d offset %s: %w", tp.Partition, tp.Offset, tp.Error)
		}
	}
	switch {
	case failed != nil && failed.Error() != k.commitFailing:
		k.commitFailing = failed.Error()
		k.log.Warn("auto commit failed; retried every second", "error", failed)
	case failed == nil && k.commitFailing != "":
		k.log.Info("auto commit works again", "after", k.commitFailing)
		k.commitFailing = ""
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
