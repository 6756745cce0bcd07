package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The validation rule of the product lives here and only here: every
// consumer and the dashboard's audit call Check (directly or through a
// Validator), so they skip exactly the same records for the same reason.
//
// A record is invalid when
//   - its value is not JSON (NotJSON), or lacks a field (MissingField), or
//     has a field of the wrong JSON type (WrongType);
//   - a number is absurd (Absurd): negative, NaN-like ("NaN", "Infinity"
//     as a string), beyond float64 (1e999) or beyond what a machine can
//     reach (MaxHours, MaxKm, a timestamp past MaxTimestamp);
//   - its key is empty (EmptyKey) or differs from sensor_id (KeyMismatch);
//   - it repeats a JSON key, or its sensor_id has whitespace around it
//     (Malformed);
//   - against the last VALID record of the same sensor in the same
//     partition (the reference), its timestamp or an odometer is lower
//     (Backwards), or its counters grew more than the time elapsed allows
//     (Jump, plausible.go). Invalid records are never that reference, so
//     one bad reading does not make the good ones after it look bad.
//
// An invalid record never yields a Message: no field of it becomes a zero
// or a NaN anywhere.

// Kind names why a record is invalid; it is the first word of the reason.
type Kind string

// The kinds of invalid record.
const (
	NotJSON      Kind = "not-json"
	MissingField Kind = "missing-field"
	WrongType    Kind = "wrong-type"
	Absurd       Kind = "absurd-value"
	EmptyKey     Kind = "empty-key"
	KeyMismatch  Kind = "key-mismatch"
	Backwards    Kind = "backwards"
	// Jump: the counters moved further than the time elapsed since the
	// reference allows (plausible.go).
	Jump Kind = "jump"
	// Malformed: JSON of the right types that is still no message: a key
	// given twice, a sensor_id with whitespace around it.
	Malformed Kind = "malformed"
)

// Kinds lists the kinds the producer injects (--inject-bad), in that
// order. Jump and Malformed come only from other writers.
var Kinds = []Kind{NotJSON, MissingField, WrongType, Backwards, Absurd, EmptyKey, KeyMismatch}

// Plausibility bounds: a value beyond them is not a reading.
const (
	// MaxHours is ~114 years of engine running.
	MaxHours = 1e6
	// MaxKm is 100 million km.
	MaxKm = 1e8
	// MaxTimestamp is 3000-01-01T00:00:00Z in epoch milliseconds.
	MaxTimestamp int64 = 32503680000000
)

// ErrInvalid matches (errors.Is) every *InvalidError, so callers can count
// and skip with errors.Is(err, ErrInvalid).
var ErrInvalid = errors.New("invalid message")

// ErrBackwards matches (errors.Is) an *InvalidError of kind Backwards.
var ErrBackwards = fmt.Errorf("%w: odometer went backwards", ErrInvalid)

// InvalidError is why a record is invalid. Error() is "kind: detail", the
// reason the dashboard shows and the dead-letter topic's reason header.
type InvalidError struct {
	Kind   Kind
	Detail string
}

func (e *InvalidError) Error() string { return string(e.Kind) + ": " + e.Detail }

// Is makes errors.Is(err, ErrInvalid) true, and errors.Is(err,
// ErrBackwards) true for the Backwards kind.
func (e *InvalidError) Is(target error) bool {
	return target == ErrInvalid || (target == ErrBackwards && e.Kind == Backwards)
}

func invalid(kind Kind, format string, args ...any) *InvalidError {
	return &InvalidError{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of an invalid-record error ("" for any other error).
func KindOf(err error) Kind {
	var ie *InvalidError
	if errors.As(err, &ie) {
		return ie.Kind
	}
	return ""
}

// Check is the one validation rule: it decodes the record and judges it on
// its own and, when prev is not nil, against prev, the last valid message
// of the same sensor in the same partition (the caller picks it: a record
// of another sensor or partition is simply not compared). A nil error
// comes with the message; any error is an *InvalidError.
func Check(key, value []byte, prev *Message) (Message, error) {
	return check(key, value, prev, 1, nil)
}

// CheckAfter is Check with prev steps messages of the partition back
// (CheckSuccessorAfter).
func CheckAfter(key, value []byte, prev *Message, steps int64) (Message, error) {
	return check(key, value, prev, steps, nil)
}

// check is CheckAfter with the sensor ids' strings from ids (nil: new ones).
func check(key, value []byte, prev *Message, steps int64, ids *names) (Message, error) {
	m, err := decode(value, ids)
	if err != nil {
		return Message{}, err
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	switch {
	case len(key) == 0:
		return Message{}, invalid(EmptyKey, "record has no key (sensor_id %q)", m.SensorID)
	case string(key) != m.SensorID:
		return Message{}, invalid(KeyMismatch, "key %q does not match sensor_id %q", key, m.SensorID)
	}
	if prev != nil && prev.SensorID == m.SensorID {
		if err := CheckSuccessorAfter(*prev, m, steps); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

// Decode is Check without a previous message: everything but Backwards.
func Decode(key, value []byte) (Message, error) { return Check(key, value, nil) }

// counterFault says which of an odometer counter's bounds v breaks.
func counterFault(v, max float64) string {
	switch {
	case !finite(v):
		return "is not a finite number"
	case v < 0:
		return "is negative"
	}
	return fmt.Sprintf("is above the maximum of %g", max)
}

// Validate checks the message on its own (not against earlier messages).
func (m Message) Validate() error {
	switch {
	case strings.TrimSpace(m.SensorID) == "":
		return invalid(MissingField, "sensor_id is blank")
	case strings.TrimSpace(m.SensorID) != m.SensorID:
		// Drawn on screen it would pass for the trimmed id, a sensor of
		// its own all the same.
		return invalid(Malformed, "sensor_id %q has whitespace around it", m.SensorID)
	case m.Timestamp <= 0 || m.Timestamp > MaxTimestamp:
		return invalid(Absurd, "timestamp %d is not an epoch-ms time between 1970 and 3000", m.Timestamp)
	case !finite(m.Odometry.HoursTot) || m.Odometry.HoursTot < 0 || m.Odometry.HoursTot > MaxHours:
		return invalid(Absurd, "hours_tot %v %s", m.Odometry.HoursTot, counterFault(m.Odometry.HoursTot, MaxHours))
	case !finite(m.Odometry.KmTot) || m.Odometry.KmTot < 0 || m.Odometry.KmTot > MaxKm:
		return invalid(Absurd, "km_tot %v %s", m.Odometry.KmTot, counterFault(m.Odometry.KmTot, MaxKm))
	case !finite(m.Position.Lat) || m.Position.Lat < -90 || m.Position.Lat > 90:
		return invalid(Absurd, "lat %v out of range", m.Position.Lat)
	case !finite(m.Position.Lon) || m.Position.Lon < -180 || m.Position.Lon > 180:
		return invalid(Absurd, "lon %v out of range", m.Position.Lon)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// wire keeps every field raw, so a missing field, a null, a wrong JSON type
// and an out-of-range number are told apart (and never become a zero).
// Field names match exactly, as in the nested objects: encoding/json's
// struct fields would also take "SENSOR_ID".
type wire struct {
	SensorID, Timestamp, Odometry, Position json.RawMessage
}

type pair struct {
	A json.RawMessage
	B json.RawMessage
}

func decode(value []byte, ids *names) (Message, error) {
	if m, ok := decodeCanonical(value, ids); ok {
		return m, nil
	}
	return decodeGeneral(value)
}

// decodeGeneral reads any value, telling every kind of bad input apart.
func decodeGeneral(value []byte) (Message, error) {
	if len(bytes.TrimSpace(value)) == 0 {
		return Message{}, invalid(NotJSON, "empty value")
	}
	if !json.Valid(value) {
		return Message{}, invalid(NotJSON, "value is not JSON: %s", preview(value))
	}
	if !isObject(value) {
		return Message{}, invalid(WrongType, "value is JSON but not an object: %s", preview(value))
	}
	if key, ok := repeatedKey(value); ok {
		return Message{}, invalid(Malformed, "key %q appears twice in one object: which one counts is a guess", key)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(value, &top); err != nil {
		return Message{}, invalid(WrongType, "value: %v", err)
	}
	w := wire{SensorID: top["sensor_id"], Timestamp: top["timestamp"], Odometry: top["odometry"], Position: top["position"]}
	var m Message
	var err error
	if m.SensorID, err = str(w.SensorID, "sensor_id"); err != nil {
		return Message{}, err
	}
	if m.Timestamp, err = integer(w.Timestamp, "timestamp"); err != nil {
		return Message{}, err
	}
	odo, err := object(w.Odometry, "odometry", "hours_tot", "km_tot")
	if err != nil {
		return Message{}, err
	}
	if m.Odometry.HoursTot, err = number(odo.A, "odometry.hours_tot"); err != nil {
		return Message{}, err
	}
	if m.Odometry.KmTot, err = number(odo.B, "odometry.km_tot"); err != nil {
		return Message{}, err
	}
	pos, err := object(w.Position, "position", "lat", "lon")
	if err != nil {
		return Message{}, err
	}
	if m.Position.Lat, err = number(pos.A, "position.lat"); err != nil {
		return Message{}, err
	}
	if m.Position.Lon, err = number(pos.B, "position.lon"); err != nil {
		return Message{}, err
	}
	return m, nil
}

func isObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

func missing(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

func str(raw json.RawMessage, field string) (string, error) {
	if missing(raw) {
		return "", invalid(MissingField, "missing %s", field)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid(WrongType, "%s is %s, want a string", field, preview(raw))
	}
	return s, nil
}

func object(raw json.RawMessage, field, a, b string) (pair, error) {
	if missing(raw) {
		return pair{}, invalid(MissingField, "missing %s", field)
	}
	if !isObject(raw) {
		return pair{}, invalid(WrongType, "%s is %s, want an object", field, preview(raw))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return pair{}, invalid(WrongType, "%s: %v", field, err)
	}
	p := pair{A: fields[a], B: fields[b]}
	if missing(p.A) {
		return pair{}, invalid(MissingField, "missing %s.%s", field, a)
	}
	if missing(p.B) {
		return pair{}, invalid(MissingField, "missing %s.%s", field, b)
	}
	return p, nil
}

// nanLike are strings some encoders write for non-finite floats.
var nanLike = map[string]bool{"nan": true, "+nan": true, "-nan": true, "inf": true, "+inf": true,
	"-inf": true, "infinity": true, "+infinity": true, "-infinity": true}

func number(raw json.RawMessage, field string) (float64, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err == nil && nanLike[strings.ToLower(strings.TrimSpace(s))] {
			return 0, invalid(Absurd, "%s is %s, a NaN-like value", field, preview(raw))
		}
		return 0, invalid(WrongType, "%s is %s, want a number", field, preview(raw))
	}
	if len(t) == 0 || !(t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		return 0, invalid(WrongType, "%s is %s, want a number", field, preview(raw))
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil || !finite(f) {
		return 0, invalid(Absurd, "%s is %s, beyond any float64", field, preview(raw))
	}
	return f, nil
}

func integer(raw json.RawMessage, field string) (int64, error) {
	if missing(raw) {
		return 0, invalid(MissingField, "missing %s", field)
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || !(t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		return 0, invalid(WrongType, "%s is %s, want an integer", field, preview(raw))
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	if err == nil {
		return n, nil
	}
	if f, ferr := strconv.ParseFloat(string(t), 64); ferr == nil && f == math.Trunc(f) && finite(f) {
		if math.Abs(f) >= 1<<63 {
			return 0, invalid(Absurd, "%s is %s, beyond any int64", field, preview(raw))
		}
		return int64(f), nil // 1.7e12 is an integer written with an exponent
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, invalid(Absurd, "%s is %s, beyond any int64", field, preview(raw))
	}
	return 0, invalid(WrongType, "%s is %s, want an integer", field, preview(raw))
}

// preview is a short, printable excerpt of a raw value for reasons.
func preview(b []byte) string {
	const max = 40
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

// Verdict is what a Validator made of a record.
type Verdict int

const (
	// Valid: the record is the sensor's new last valid message.
	Valid Verdict = iota
	// Invalid: bad input; count it and skip it.
	Invalid
	// Replay: the record's offset was already judged by this validator (a
	// re-delivery after a rebalance or a reconnect). It is neither valid
	// nor invalid again: skip it without counting it.
	Replay
)

func (v Verdict) String() string {
	switch v {
	case Valid:
		return "valid"
	case Invalid:
		return "invalid"
	case Replay:
		return "replay"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

type series struct {
	sensor    string
	partition int32
}

// Validator applies Check to records read in offset order per partition
// from the start of the partition (consumer-current, the dashboard's audit,
// tests): it keeps the last valid message of each sensor in each partition
// and how far each partition was judged, so a record is judged once
// whatever is delivered again. Not safe for concurrent use.
type Validator struct {
	last   map[series]*Message
	lastAt map[series]int64 // the offset of last's message
	next   map[int32]int64
	ids    names
}

// NewValidator returns a validator that has judged nothing.
func NewValidator() *Validator {
	return &Validator{last: map[series]*Message{}, lastAt: map[series]int64{}, next: map[int32]int64{}}
}

// Judge judges the record at partition/offset. A record below the
// partition's judged position is a Replay; otherwise it is Valid (the
// message is returned and becomes the sensor's reference) or Invalid (the
// error is an *InvalidError).
func (v *Validator) Judge(partition int32, offset int64, key, value []byte) (Message, Verdict, error) {
	if next, ok := v.next[partition]; ok && offset < next {
		return Message{}, Replay, nil
	}
	v.next[partition] = offset + 1
	m, err := check(key, value, nil, 1, &v.ids)
	if err != nil {
		return Message{}, Invalid, err
	}
	at := series{m.SensorID, partition}
	prev := v.last[at]
	if prev == nil {
		first := new(Message)
		*first = m
		v.last[at], v.lastAt[at] = first, offset
		return m, Valid, nil
	}
	if err := CheckSuccessorAfter(*prev, m, offset-v.lastAt[at]); err != nil {
		return Message{}, Invalid, err
	}
	*prev, v.lastAt[at] = m, offset
	return m, Valid, nil
}

// Forget drops what the validator knows of a partition, for a reader that
// found its log restarted (offsets going back on a fresh broker).
func (v *Validator) Forget(partition int32) {
	delete(v.next, partition)
	for k := range v.last {
		if k.partition == partition {
			delete(v.last, k)
			delete(v.lastAt, k)
		}
	}
}

// Reference is a Validator's last valid message of a sensor in a
// partition: what the next record of that sensor there is judged against.
type Reference struct {
	Partition int32   `json:"partition"`
	Message   Message `json:"message"`
	// Offset is where Message was read (0 in states saved before it was
	// kept: the next reading is then judged leniently, as many steps on).
	Offset int64 `json:"offset,omitempty"`
}

// References lists the validator's references, by sensor then partition:
// with Judged, what a state saved to be judged on from where it stopped
// needs (RestoreValidator).
func (v *Validator) References() []Reference {
	out := make([]Reference, 0, len(v.last))
	for s, m := range v.last {
		out = append(out, Reference{Partition: s.partition, Message: *m, Offset: v.lastAt[s]})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Message.SensorID < b.Message.SensorID || (a.Message.SensorID == b.Message.SensorID && a.Partition < b.Partition)
	})
	return out
}

// Judged is, per partition, the offset after the last record judged.
func (v *Validator) Judged() map[int32]int64 {
	out := make(map[int32]int64, len(v.next))
	for p, n := range v.next {
		out[p] = n
	}
	return out
}

// RestoreValidator is a validator that has judged each partition p up to
// judged[p] (exclusive) and holds refs as its references: it judges the
// records that follow exactly as the validator they were taken from would.
func RestoreValidator(judged map[int32]int64, refs []Reference) *Validator {
	v := NewValidator()
	for p, n := range judged {
		v.next[p] = n
	}
	for _, r := range refs {
		m := r.Message
		v.last[series{m.SensorID, r.Partition}] = &m
		v.lastAt[series{m.SensorID, r.Partition}] = r.Offset
	}
	return v
}
