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
)

// AcksSettings lists the settings in the order the a key cycles them.
var AcksSettings = []Acks{AcksAll, AcksLeader}

// ParseAcks validates an acks setting.
func ParseAcks(s string) (Acks, error) {
	return parse(s, "acks setting", AcksSettings)
}

// Other returns the setting the a key switches to.
func (a Acks) Other() Acks { return following(AcksSettings, a) }

// Idempotent reports whether a producer with this setting is idempotent.
func (a Acks) Idempotent() bool { return a != AcksLeader }

// Gist is Meaning in a status line's room.
func (a Acks) Gist() string {
	if a == AcksLeader {
		return "acks=1: the leader alone confirms a write; idempotence off"
	}
	return "acks=all: a write is confirmed once every in-sync replica has it; idempotent"
}

// Meaning is what the setting means, in a sentence for the timeline.
func (a Acks) Meaning() string {
	if a == AcksLeader {
		return "acks=1: the leader confirms a write alone, before any follower has it; " +
			"idempotence off (librdkafka requires acks=all for it), so a retried write can land twice"
	}
	return "acks=all: a write is confirmed once every in-sync replica has it " +
		"(refused while the ISR is below min.insync.replicas); idempotent, a retry is never written twice"
}
