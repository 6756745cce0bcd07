package store

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/bson/bsontype"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// The usage records of a consumer-usage of the user's (--usage-cmd): one
// document per saved delta in the collection usage of its own database,
// in the seed's schema (sensor_id, date, delta_hours, delta_km), with the
// message it comes from (partition, offset) if the consumer says so. It
// keeps no summaries and no seqs, so every read is a scan of the records,
// each checked against that schema: a record that breaks it is counted
// under its reason and never summed.

// Scan is one read of such a collection.
type Scan struct {
	// Sensors: per sensor, its well-formed records.
	Sensors map[string]ScannedSensor
	// Malformed counts the records that break the schema, by reason, with
	// one of them shown for each (Example).
	Malformed map[string]int
	Example   map[string]string
	// Records is every document read, malformed ones included.
	Records int
}

// ScannedSensor is one sensor's well-formed records in the order read,
// numbered from 1 (their Seq), and their summary.
type ScannedSensor struct {
	Summary Summary
	Records []SensorRecord
	// Unlocated is how many of them carry no partition and offset: such a
	// sensor's totals are known, the messages they stand for are not.
	Unlocated int64
}

// Located reports whether every record names the message it comes from.
func (s ScannedSensor) Located() bool { return s.Unlocated == 0 && len(s.Records) > 0 }

// Coverage is each sensor's totals as a usage answer states them.
func (sc Scan) Coverage() map[string]Covered {
	out := make(map[string]Covered, len(sc.Sensors))
	for id, s := range sc.Sensors {
		out[id] = s.Summary.Covered()
	}
	return out
}

// ScanRecords reads every record of the usage collection, in the order
// the store returns them, sorted per sensor by the message they come from
// (records without one keep their place at the end).
func (s *Store) ScanRecords(ctx context.Context) (Scan, error) {
	// Only the schema's fields: a consumer may keep anything else in its
	// records, and every scan would read it.
	proj := options.Find().SetProjection(bson.D{{Key: "_id", Value: 0},
		{Key: "sensor_id", Value: 1}, {Key: "date", Value: 1}, {Key: "delta_hours", Value: 1}, {Key: "delta_km", Value: 1},
		{Key: "partition", Value: 1}, {Key: "offset", Value: 1}})
	cur, err := s.db.Collection(usageColl).Find(ctx, bson.D{}, proj)
	if err != nil {
		return Scan{}, fmt.Errorf("store: usage records: %w", err)
	}
	defer cur.Close(ctx)
	sc := Scan{Sensors: map[string]ScannedSensor{}, Malformed: map[string]int{}, Example: map[string]string{}}
	recs := map[string][]UsageRecord{}
	for cur.Next(ctx) {
		sc.Records++
		rec, located, why := checkRecord(cur.Current)
		if why != "" {
			sc.Malformed[why]++
			if _, ok := sc.Example[why]; !ok {
				sc.Example[why] = exampleOf(cur.Current)
			}
			continue
		}
		if !located {
			rec.Offset = -1
		}
		recs[rec.SensorID] = append(recs[rec.SensorID], rec)
	}
	if err := cur.Err(); err != nil {
		return Scan{}, fmt.Errorf("store: usage records: %w", err)
	}
	for id, rs := range recs {
		sort.SliceStable(rs, func(i, j int) bool { return messageBefore(rs[i], rs[j]) })
		var ss ScannedSensor
		for i, rec := range rs {
			if rec.Offset < 0 {
				ss.Unlocated++
				rec.Partition, rec.Offset = 0, 0
			}
			rec.Seq = int64(i + 1)
			ss.Summary = ss.Summary.Fold(rec)
			ss.Records = append(ss.Records, SensorRecord{Seq: rec.Seq, Partition: rec.Partition, Offset: rec.Offset,
				HoursCents: Cents(rec.DeltaHours), KmCents: Cents(rec.DeltaKm)})
		}
		sc.Sensors[id] = ss
	}
	return sc, nil
}

// messageBefore orders records by the message they come from; records
// that name none (Offset -1) go last, in the order read.
func messageBefore(a, b UsageRecord) bool {
	if (a.Offset < 0) != (b.Offset < 0) {
		return b.Offset < 0
	}
	if a.Offset < 0 || a.Partition == b.Partition && a.Offset == b.Offset {
		return false
	}
	if a.Partition != b.Partition {
		return a.Partition < b.Partition
	}
	return a.Offset < b.Offset
}

// maxDelta bounds one delta: more hours than a year has, or km than a
// machine drives in one, is not a delta of this fleet.
const maxDelta = 1e6

// checkRecord reads doc as a usage record of the seed's schema; why names
// the first rule it breaks ("" when none), and located says it names its
// message (partition and offset, both or neither).
func checkRecord(doc bson.Raw) (rec UsageRecord, located bool, why string) {
	id, ok := doc.Lookup("sensor_id").StringValueOK()
	if !ok || id == "" {
		return rec, false, "sensor_id missing or not a string"
	}
	day, ok := doc.Lookup("date").StringValueOK()
	if !ok {
		return rec, false, "date missing or not a string"
	}
	if t, err := time.Parse(time.DateOnly, day); err != nil || t.Format(time.DateOnly) != day {
		return rec, false, "date not YYYY-MM-DD"
	}
	hours, why := deltaOf(doc, "delta_hours")
	if why != "" {
		return rec, false, why
	}
	km, why := deltaOf(doc, "delta_km")
	if why != "" {
		return rec, false, why
	}
	rec.SensorID, rec.Date, rec.DeltaHours, rec.DeltaKm = id, day, hours, km
	p, hasP := doc.Lookup("partition").AsInt64OK()
	o, hasO := doc.Lookup("offset").AsInt64OK()
	_, pErr := doc.LookupErr("partition")
	_, oErr := doc.LookupErr("offset")
	switch {
	case pErr != nil && oErr != nil:
		return rec, false, ""
	case !hasP || !hasO || p < 0 || o < 0 || p > math.MaxInt32:
		return rec, false, "partition and offset not both whole numbers ≥ 0"
	}
	rec.Partition, rec.Offset = int32(p), o
	return rec, true, ""
}

// deltaOf is field's number, or why it is not a delta.
func deltaOf(doc bson.Raw, field string) (float64, string) {
	v, err := doc.LookupErr(field)
	if err != nil {
		return 0, field + " missing"
	}
	var f float64
	switch v.Type {
	case bsontype.Double:
		f = v.Double()
	case bsontype.Int32, bsontype.Int64:
		n, _ := v.AsInt64OK()
		f = float64(n)
	default:
		return 0, field + " not a number"
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, field + " not a finite number"
	case f < 0:
		return 0, field + " negative"
	case f > maxDelta:
		return 0, field + " over 1e6"
	}
	return f, ""
}

// exampleOf is a malformed record as one short line.
func exampleOf(doc bson.Raw) string {
	s := doc.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
