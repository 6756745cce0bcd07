package producer

import (
	"encoding/json"
	"fmt"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// BadRecord is a malformed record the producer publishes on purpose
// (--inject-bad, POST /inject-bad): the poison every consumer must count,
// skip and, for consumer-usage, forward once to the dead-letter topic.
type BadRecord struct {
	// Kind is what telemetry.Check must call it.
	Kind telemetry.Kind
	// Variant tells apart the records of one kind (e.g. "absurd-value/nan").
	Variant string
	Key     []byte // nil: no key
	Value   []byte
}

// badVariants is the cycle BadRecords walks: every kind of invalid record,
// the absurd value three ways. One full cycle is BadCycle records.
var badVariants = []struct {
	kind    telemetry.Kind
	variant string
}{
	{telemetry.NotJSON, "not-json"},
	{telemetry.MissingField, "missing-field"},
	{telemetry.WrongType, "wrong-type"},
	{telemetry.Backwards, "backwards"},
	{telemetry.Absurd, "absurd-value/negative"},
	{telemetry.Absurd, "absurd-value/nan"},
	{telemetry.Absurd, "absurd-value/1e308"},
	{telemetry.EmptyKey, "empty-key"},
	{telemetry.KeyMismatch, "key-mismatch"},
}

// BadCycle is the number of records that covers every kind and variant once.
var BadCycle = len(badVariants)

// BadRecords returns n malformed records, walking every kind in turn (n =
// BadCycle gives one of each). Record j is about sensor j mod the fleet's
// size and is built from that sensor's last message (last(i)), which must
// be in the topic before the record: a "backwards" record is then below
// the sensor's last valid odometers, and every other record is wrong in
// exactly one way. They never change the fleet.
func BadRecords(n, sensors int, last func(i int) telemetry.Message) []BadRecord {
	out := make([]BadRecord, 0, max(n, 0))
	for j := range max(n, 0) {
		i := j % sensors
		m := last(i)
		m.Timestamp++
		id := m.SensorID
		v := badVariants[j%len(badVariants)]
		rec := BadRecord{Kind: v.kind, Variant: v.variant, Key: []byte(id)}
		switch v.variant {
		case "not-json":
			rec.Value = []byte(fmt.Sprintf("sensor %s says hello, not JSON", id))
		case "missing-field":
			rec.Value = mutate(m, func(o map[string]any) { delete(o, "odometry") })
		case "wrong-type":
			rec.Value = mutate(m, func(o map[string]any) {
				o["odometry"].(map[string]any)["hours_tot"] = fmt.Sprint(m.Odometry.HoursTot)
			})
		case "backwards":
			b := m
			b.Odometry.HoursTot = telemetry.Round2(m.Odometry.HoursTot / 2)
			b.Odometry.KmTot = telemetry.Round2(m.Odometry.KmTot / 2)
			rec.Value = mutate(b, nil)
		case "absurd-value/negative":
			rec.Value = mutate(m, func(o map[string]any) { o["odometry"].(map[string]any)["km_tot"] = -42.5 })
		case "absurd-value/nan":
			rec.Value = mutate(m, func(o map[string]any) { o["odometry"].(map[string]any)["km_tot"] = "NaN" })
		case "absurd-value/1e308":
			rec.Value = mutate(m, func(o map[string]any) { o["odometry"].(map[string]any)["hours_tot"] = 1e308 })
		case "empty-key":
			rec.Key = nil
			rec.Value = mutate(m, nil)
		case "key-mismatch":
			other := SensorID((i+1)%sensors, sensors)
			if other == id {
				other = "not-" + id
			}
			rec.Key = []byte(other)
			rec.Value = mutate(m, nil)
		}
		out = append(out, rec)
	}
	return out
}

// mutate encodes m as JSON after f changed its generic form (f may be nil).
func mutate(m telemetry.Message, f func(map[string]any)) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		return []byte("{")
	}
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil {
		return []byte("{")
	}
	if f != nil {
		f(o)
	}
	b, err = json.Marshal(o)
	if err != nil {
		return []byte("{")
	}
	return b
}
