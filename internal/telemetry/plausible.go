package telemetry

import "time"

// The successor rule judges a reading against its sensor's reference (the
// last valid reading before it in its partition). Counters only grow, and
// no faster than the clock: an engine cannot run more hours than have
// passed, nor drive further than its top speed allows in that time.
const (
	// StepAllowanceHours is how far a reading may run ahead of the time
	// elapsed since the reference, in engine hours, for each message of the
	// partition that lies between them. The lab's simulation compresses
	// time (one message stands for up to 0.2 engine hours, however soon
	// after the previous one it comes), so the allowance covers one such
	// step a message with room to spare; a clock alone would allow none.
	// Counting the messages between keeps a reference that is many messages
	// old (consumer-usage's checkpoint after it skipped to latest, or a stale
	// one after a rebalance) from refusing every reading after it.
	StepAllowanceHours = 1.0
	// MaxSpeedKmh is the top speed of a machine: km may grow by at most
	// this times the engine hours allowed.
	MaxSpeedKmh = 60.0
)

// CheckSuccessor is CheckSuccessorAfter for the reading right after prev.
func CheckSuccessor(prev, next Message) error { return CheckSuccessorAfter(prev, next, 1) }

// CheckSuccessorAfter judges next against prev, its sensor's last valid
// reading in the same partition, steps messages of that partition later
// (next's offset minus prev's; 1 when not known). next is invalid when
//   - its timestamp is before prev's, or an odometer is below prev's
//     (Backwards);
//   - it has prev's timestamp but not prev's reading (Jump: nothing can
//     change in no time; the same reading again is a duplicate, valid,
//     and yields no usage);
//   - its hours grew more than the time elapsed plus StepAllowanceHours a
//     step, or its km more than MaxSpeedKmh times that (Jump).
//
// An invalid reading never becomes the reference, so the next one is
// judged against prev again: one outlier cannot block its sensor.
func CheckSuccessorAfter(prev, next Message, steps int64) error {
	po, no := prev.Odometry, next.Odometry
	switch {
	case next.Timestamp < prev.Timestamp:
		return invalid(Backwards, "timestamp went backwards (%s -> %s)", stamp(prev.Timestamp), stamp(next.Timestamp))
	case no.HoursTot < po.HoursTot || no.KmTot < po.KmTot:
		return invalid(Backwards, "odometer went backwards (hours %.2f -> %.2f, km %.2f -> %.2f)",
			po.HoursTot, no.HoursTot, po.KmTot, no.KmTot)
	case next.Timestamp == prev.Timestamp && next != prev:
		return invalid(Jump, "a different reading at the same timestamp %s (hours %.2f -> %.2f, km %.2f -> %.2f)",
			stamp(next.Timestamp), po.HoursTot, no.HoursTot, po.KmTot, no.KmTot)
	}
	elapsed := float64(next.Timestamp-prev.Timestamp) / float64(time.Hour/time.Millisecond)
	allowed := elapsed + StepAllowanceHours*float64(max(steps, 1))
	if dh := no.HoursTot - po.HoursTot; dh > allowed {
		return invalid(Jump, "hours %.2f -> %.2f: %.2f h of engine time in %.2f h of clock (at most %.2f h)",
			po.HoursTot, no.HoursTot, dh, elapsed, allowed)
	}
	if dkm := no.KmTot - po.KmTot; dkm > allowed*MaxSpeedKmh {
		return invalid(Jump, "km %.2f -> %.2f: %.2f km in %.2f h of clock (at most %.2f km at %g km/h)",
			po.KmTot, no.KmTot, dkm, elapsed, allowed*MaxSpeedKmh, MaxSpeedKmh)
	}
	return nil
}

// stamp writes an epoch-ms timestamp for a reason.
func stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
