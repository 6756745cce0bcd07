package lesson

// Acks is the producer's acks setting: how many replicas must have a
// record before the leader acknowledges it.
type Acks string

const (
	// AcksAll: the leader acknowledges once every replica in the ISR has the
	// record (and refuses it while the ISR is below min.insync.replicas).
	// The producer is idempotent: a retry is never written twice.
	AcksAll Acks = "all"
	// AcksLeader: the leader acknowledges as soon as it wrote the record
	// itself (acks=1). librdkafka allows no idempotence with it, so a
	// retry after a lost acknowledgement can be written twice.
	AcksLeader Acks = "1"
	// AcksNone: the producer does not wait for the broker at all (acks=0):
	// a record counts as sent once written to the broker's connection, and
	// the broker answers nothing, not even an offset. librdkafka allows no
	// idempotence with it, and retries nothing, since it sees no error.
	AcksNone Acks = "0"
)

// AcksSettings lists the settings in the order the a key cycles them.
var AcksSettings = []Acks{AcksAll, AcksLeader, AcksNone}

// ParseAcks validates an acks setting.
func ParseAcks(s string) (Acks, error) {
	return parse(s, "acks setting", AcksSettings)
}

// Other returns the setting the a key switches to.
func (a Acks) Other() Acks { return following(AcksSettings, a) }

// Idempotent reports whether a producer with this setting is idempotent.
func (a Acks) Idempotent() bool { return a != AcksLeader && a != AcksNone }

// Confirmed reports whether the broker confirms each write, with its
// offset: every setting but acks=0.
func (a Acks) Confirmed() bool { return a != AcksNone }

// Gist is Meaning in a status line's room.
func (a Acks) Gist() string {
	switch a {
	case AcksNone:
		return "acks=0: nothing confirmed; a record the broker never stored is lost, counted as sent"
	case AcksLeader:
		return "acks=1: the leader alone confirms a write; idempotence off"
	}
	return "acks=all: a write is confirmed once every in-sync replica has it; idempotent"
}

// Meaning is what the setting means, in a sentence for the timeline.
func (a Acks) Meaning() string {
	switch a {
	case AcksNone:
		return "acks=0: fire and forget: the producer counts a record as sent once it is on the broker's connection; " +
			"the broker confirms nothing, not even an offset, so a record it never stored is lost, counted as sent; idempotence off"
	case AcksLeader:
		return "acks=1: the leader confirms a write alone, before any follower has it; " +
			"idempotence off (librdkafka requires acks=all for it), so a retried write can land twice"
	}
	return "acks=all: a write is confirmed once every in-sync replica has it " +
		"(refused while the ISR is below min.insync.replicas); idempotent, a retry is never written twice"
}
