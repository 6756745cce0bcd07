package store

import (
	"context"
	"fmt"
	"math"
	"slices"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// Summary is one sensor's usage records folded into their totals: records
// 1..Records of the sensor, and the furthest of them and the partitions
// they came from (see Covered).
type Summary struct {
	Records    int64    `bson:"records"`
	HoursCents int64    `bson:"hours_cents"`
	KmCents    int64    `bson:"km_cents"`
	Through    Position `bson:"through"`
	Partitions []int32  `bson:"partitions"`
	// Furthest is, per partition the records came from (in partition
	// order), the furthest record of it: after partitions were added to
	// the topic a sensor's records come from two, and Through (the highest
	// offset of any) no longer says how far each was read.
	Furthest []Position `bson:"furthest,omitempty"`
}

// Fold adds one record to the summary (the next seq).
func (s Summary) Fold(rec UsageRecord) Summary {
	s.Records++
	s.HoursCents += Cents(rec.DeltaHours)
	s.KmCents += Cents(rec.DeltaKm)
	at := Position{Partition: rec.Partition, Offset: rec.Offset}
	if s.Records == 1 || at.Offset > s.Through.Offset ||
		at.Offset == s.Through.Offset && at.Partition > s.Through.Partition {
		s.Through = at
	}
	if !slices.Contains(s.Partitions, rec.Partition) {
		s.Partitions = append(slices.Clone(s.Partitions), rec.Partition)
		slices.Sort(s.Partitions)
	}
	s.Furthest = furthest(s.Furthest, at)
	return s
}

// furthest is ps (one position per partition, in partition order) with at
// taken in: a new partition's, or further than its partition's.
func furthest(ps []Position, at Position) []Position {
	i, found := slices.BinarySearchFunc(ps, at.Partition, func(p Position, part int32) int { return int(p.Partition - part) })
	if found {
		if at.Offset <= ps[i].Offset {
			return ps
		}
		ps = slices.Clone(ps)
		ps[i] = at
		return ps
	}
	return slices.Insert(slices.Clone(ps), i, at)
}

// Recorded reports whether a record read at partition/offset is at or
// before the furthest record already folded, in the same partition.
func (s Summary) Recorded(partition int32, offset int64) bool {
	return s.Records > 0 && s.Through.Partition == partition && offset <= s.Through.Offset
}

// Covered is the summary as the totals it stands for.
func (s Summary) Covered() Covered {
	return Covered{Totals: Totals{HoursCents: s.HoursCents, KmCents: s.KmCents, Records: s.Records},
		Through: s.Through, Partitions: len(s.Partitions), Furthest: slices.Clone(s.Furthest)}
}

// Totals are one sensor's accumulated usage, exact in hundredths.
type Totals struct {
	HoursCents int64
	KmCents    int64
	Records    int64
}

// Hours returns the total engine hours.
func (t Totals) Hours() float64 { return float64(t.HoursCents) / 100 }

// Km returns the total kilometres.
func (t Totals) Km() float64 { return float64(t.KmCents) / 100 }

// Plus is the sum of t and u.
func (t Totals) Plus(u Totals) Totals {
	return Totals{HoursCents: t.HoursCents + u.HoursCents, KmCents: t.KmCents + u.KmCents, Records: t.Records + u.Records}
}

// Cents converts a 2-decimal value to exact hundredths.
func Cents(f float64) int64 { return int64(math.Round(f * 100)) }

// Position is where a record was read in the topic.
type Position struct {
	Partition int32 `json:"partition" bson:"partition"`
	Offset    int64 `json:"offset" bson:"offset"`
}

// Covered is one sensor's totals together with the records they stand for:
// Through is the furthest of them (the highest offset) and Partitions how
// many partitions they came from (1 normally: keys decide the partition;
// 0 when Records is 0). A reader compares the totals with what the topic
// yields up to Through, and with nothing else.
type Covered struct {
	Totals
	Through    Position
	Partitions int
	// Furthest: per partition, its furthest record (Summary.Furthest; nil
	// from a summary written before it was kept).
	Furthest []Position
}

// UsageCoverage is every sensor's totals with the records they stand
// for, read from the summaries in the checkpoints: one document per sensor,
// each its own consistent cut (a summary and its Through are one write).
// Where a checkpoint was written by a version that kept no summary, the
// records are scanned instead (RecordedCoverage), exact but slow.
func (s *Store) UsageCoverage(ctx context.Context) (map[string]Covered, error) {
	cps, err := s.LoadCheckpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: usage totals: %w", err)
	}
	out := make(map[string]Covered, len(cps))
	for id, cp := range cps {
		if cp.Unsummarized {
			return s.RecordedCoverage(ctx)
		}
		if cp.Summary.Records > 0 {
			out[id] = cp.Summary.Covered()
		}
	}
	return out, nil
}

// UsageTotals sums every usage record per sensor, from the records
// themselves (RecordedCoverage): the independent check of the summaries.
func (s *Store) UsageTotals(ctx context.Context) (map[string]Totals, error) {
	cov, err := s.RecordedCoverage(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Totals, len(cov))
	for id, c := range cov {
		out[id] = c.Totals
	}
	return out, nil
}

// RecordedCoverage sums every usage record per sensor and notes the
// furthest record summed, from one scan of the records, in integer cents (a
// multi-accumulator $group is silently wrong on FerretDB). It costs a read
// of the whole history: tests and the rebuild of old stores use it.
func (s *Store) RecordedCoverage(ctx context.Context) (map[string]Covered, error) {
	sums, err := s.scanSummaries(ctx)
	if err != nil {
		return nil, err
	}
	cov := make(map[string]Covered, len(sums))
	for id, sum := range sums {
		cov[id] = sum.Covered()
	}
	return cov, nil
}

// scanSummaries folds every usage record into its sensor's summary.
func (s *Store) scanSummaries(ctx context.Context) (map[string]Summary, error) {
	// Without _id: records of older versions have ObjectIDs there.
	proj := options.Find().SetProjection(bson.D{{Key: "_id", Value: 0},
		{Key: "sensor_id", Value: 1}, {Key: "delta_hours", Value: 1}, {Key: "delta_km", Value: 1},
		{Key: "partition", Value: 1}, {Key: "offset", Value: 1}})
	cur, err := s.db.Collection(usageColl).Find(ctx, bson.D{}, proj)
	if err != nil {
		return nil, fmt.Errorf("store: usage totals: %w", err)
	}
	defer cur.Close(ctx)
	sums := map[string]Summary{}
	for cur.Next(ctx) {
		var rec UsageRecord
		if err := cur.Decode(&rec); err != nil {
			return nil, fmt.Errorf("store: usage totals: %w", err)
		}
		sums[rec.SensorID] = sums[rec.SensorID].Fold(rec)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("store: usage totals: %w", err)
	}
	return sums, nil
}

// SensorRecord is one usage record as the audit's attribution reads it.
type SensorRecord struct {
	Seq           int64
	Partition     int32
	Offset        int64
	HoursCents    int64
	KmCents       int64
	Writer        string
	BaseTimestamp int64
}

// UsageRecordsFrom reads the records of each sensor in from with a seq
// above from[sensor] and at most upTo[sensor] (a summary's Records: the
// records a cut stands for), in one query by _id. Records are never
// rewritten, so a reader that keeps what it read asks only for the new.
func (s *Store) UsageRecordsFrom(ctx context.Context, from, upTo map[string]int64) (map[string][]SensorRecord, error) {
	var ids []string
	for id, n := range upTo {
		for seq := from[id] + 1; seq <= n; seq++ {
			ids = append(ids, RecordID(id, seq))
		}
	}
	out := map[string][]SensorRecord{}
	if len(ids) == 0 {
		return out, nil
	}
	proj := options.Find().SetProjection(bson.D{
		{Key: "sensor_id", Value: 1}, {Key: "seq", Value: 1}, {Key: "delta_hours", Value: 1}, {Key: "delta_km", Value: 1},
		{Key: "partition", Value: 1}, {Key: "offset", Value: 1}, {Key: "writer", Value: 1}, {Key: "base_ts", Value: 1}})
	cur, err := s.db.Collection(usageColl).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, proj)
	if err != nil {
		return nil, fmt.Errorf("store: usage records: %w", err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var rec UsageRecord
		if err := cur.Decode(&rec); err != nil {
			return nil, fmt.Errorf("store: usage records: %w", err)
		}
		out[rec.SensorID] = append(out[rec.SensorID], SensorRecord{Seq: rec.Seq, Partition: rec.Partition, Offset: rec.Offset,
			HoursCents: Cents(rec.DeltaHours), KmCents: Cents(rec.DeltaKm), Writer: rec.Writer, BaseTimestamp: rec.BaseTimestamp})
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("store: usage records: %w", err)
	}
	for id, recs := range out {
		slices.SortFunc(recs, func(a, b SensorRecord) int { return int(a.Seq - b.Seq) })
		out[id] = recs
	}
	return out, nil
}

// RecordSource is where a usage record came from and which process wrote it.
type RecordSource struct {
	Position
	Writer string
}

// UsageOffsets lists, per sensor, where each usage record came from and
// who wrote it: for a test that must say which messages have no record,
// not only how many.
func (s *Store) UsageOffsets(ctx context.Context) (map[string][]RecordSource, error) {
	proj := options.Find().SetProjection(bson.D{
		{Key: "sensor_id", Value: 1}, {Key: "partition", Value: 1}, {Key: "offset", Value: 1}, {Key: "writer", Value: 1}})
	cur, err := s.db.Collection(usageColl).Find(ctx, bson.D{}, proj)
	if err != nil {
		return nil, fmt.Errorf("store: usage offsets: %w", err)
	}
	defer cur.Close(ctx)
	out := map[string][]RecordSource{}
	for cur.Next(ctx) {
		var rec struct {
			SensorID  string `bson:"sensor_id"`
			Partition int32  `bson:"partition"`
			Offset    int64  `bson:"offset"`
			Writer    string `bson:"writer"`
		}
		if err := cur.Decode(&rec); err != nil {
			return nil, fmt.Errorf("store: usage offsets: %w", err)
		}
		out[rec.SensorID] = append(out[rec.SensorID], RecordSource{Position{rec.Partition, rec.Offset}, rec.Writer})
	}
	return out, cur.Err()
}
