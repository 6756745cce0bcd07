package kafkacfg

import (
	"fmt"
	"time"
)

// When a broker deletes a group's committed offsets (--offsets-retention):
//
//   - Apache Kafka (KIP-211, offsets.retention.minutes): a consumer group's
//     commits are kept while it has members; once it is empty they expire
//     offsets.retention.minutes after the moment it became empty (the
//     group's state timestamp; the commit's own time only for a group
//     without one), at the next check of offsets.retention.check.interval.ms.
//   - kfake (offset.retention.ms, its own key, taking precedence over
//     offsets.retention.minutes): nearly the same rule, on a ticker of
//     offsets.retention.check.interval.ms created when the cluster starts
//     (so it is read once, at the start); a classic group (consumer-usage's)
//     expires only in the Empty state, counted from the later of "became
//     empty" and its last commit; a group that only ever committed (no
//     protocol, no members) counts from the commit.
//
// consumer-usage is a static member: a stop does not leave the group, so
// the group becomes empty only when its session (6 s) runs out; the commits
// expire a retention after that.

// OffsetsRetentionMin and OffsetsRetentionMax bound --offsets-retention on
// the embedded broker; Apache Kafka takes whole minutes from one
// (OffsetsRetentionMinApache).
const (
	OffsetsRetentionMin       = time.Second
	OffsetsRetentionMax       = 7 * 24 * time.Hour
	OffsetsRetentionMinApache = time.Minute
)

// OffsetsRetentionCheck is how often a broker looks for expired commits
// under retention d: a tenth of it, from 100 ms to 1 s, so a commit
// expires within a second of its retention.
func OffsetsRetentionCheck(d time.Duration) time.Duration {
	return min(max(d/10, 100*time.Millisecond), time.Second)
}

// CheckOffsetsRetention says whether d can be an offsets retention: on
// Apache Kafka (apache) only whole minutes from one.
func CheckOffsetsRetention(d time.Duration, apache bool) error {
	switch {
	case apache && (d < OffsetsRetentionMinApache || d%time.Minute != 0):
		return fmt.Errorf("Apache Kafka's offsets.retention.minutes takes whole minutes, at least 1m, got %s", d)
	case d < OffsetsRetentionMin || d > OffsetsRetentionMax:
		return fmt.Errorf("must be between %s and %s, got %s", OffsetsRetentionMin, OffsetsRetentionMax, d)
	}
	return nil
}

// KfakeOffsetsRetention is the embedded broker's configuration for
// retention d; 0 gives every key back its default ("" clears a value an
// earlier run of the data dir persisted).
func KfakeOffsetsRetention(d time.Duration) map[string]string {
	if d <= 0 {
		return map[string]string{"offset.retention.ms": "", "offsets.retention.check.interval.ms": ""}
	}
	return map[string]string{
		"offset.retention.ms":                 fmt.Sprint(d.Milliseconds()),
		"offsets.retention.check.interval.ms": fmt.Sprint(OffsetsRetentionCheck(d).Milliseconds()),
	}
}

// ApacheOffsetsRetention is server.properties' keys for retention d (whole
// minutes, see CheckOffsetsRetention); nil for 0 (the broker's defaults).
func ApacheOffsetsRetention(d time.Duration) map[string]string {
	if d <= 0 {
		return nil
	}
	return map[string]string{
		"offsets.retention.minutes":           fmt.Sprint(int64(d / time.Minute)),
		"offsets.retention.check.interval.ms": fmt.Sprint(OffsetsRetentionCheck(d).Milliseconds()),
	}
}
