// Package store is the one place that talks to MongoDB (or the embedded
// FerretDB, which speaks its wire protocol). Collections:
//
//	usage        one document per saved delta (the seed's usage records),
//	             _id "<sensor>#<seq>": the sensor's seq-th record
//	checkpoints  one document per sensor: the last message consumer-usage
//	             applied, the first one it ever checkpointed, and the
//	             summary of the sensor's records folded so far
//
// Totals are read from the summaries, so a usage answer costs one document
// per sensor however long the history (FerretDB v1 reads a whole collection
// for any query). A summary is written in the checkpoint's own single-document
// write; an orphan record (its writer died before the checkpoint) sits at the
// next seq and is folded before anything is written after it. FerretDB v1
// computes only a $group's first accumulator and is not atomic under
// concurrent updates, so sums are done here in integer cents and exactness
// depends on no transaction or compare-and-set.
package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/bson/primitive"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// DefaultDatabase is used when the URI names none.
const DefaultDatabase = "krl"

const (
	usageColl      = "usage"
	checkpointColl = "checkpoints"
)

// Store is a connection to the database of the product.
type Store struct {
	client *mongo.Client
	db     *mongo.Database
}

// Connect opens a client for uri. It does not wait for the server: call Ping
// to learn whether it is reachable (the driver retries by itself).
func Connect(ctx context.Context, uri string) (*Store, error) {
	dbName, err := databaseName(uri)
	if err != nil {
		return nil, err
	}
	opts := options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(3 * time.Second).
		SetConnectTimeout(3 * time.Second)
	client, err := mongo.Connect(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("store: %w", redact.Error(err))
	}
	return &Store{client: client, db: client.Database(dbName)}, nil
}

func databaseName(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return "", fmt.Errorf("store: %q is not a mongodb:// URI", redact.String(uri))
	}
	if name := strings.Trim(u.Path, "/"); name != "" {
		return name, nil
	}
	return DefaultDatabase, nil
}

// WithDatabase returns uri naming database db instead of its own; with
// credentials, authSource keeps naming the database they were checked
// against (the one the URI named, else admin).
func WithDatabase(uri, db string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", redact.Error(err)
	}
	if u.Scheme != "mongodb" && u.Scheme != "mongodb+srv" {
		return "", fmt.Errorf("%q is not a mongodb:// URI", redact.String(uri))
	}
	q := u.Query()
	if u.User != nil && q.Get("authSource") == "" {
		// Credentials are checked against the database the URI named.
		src := "admin"
		if p := u.Path; len(p) > 1 {
			src = p[1:]
		}
		q.Set("authSource", src)
		u.RawQuery = q.Encode()
	}
	u.Path = "/" + db
	return u.String(), nil
}

// Close disconnects.
func (s *Store) Close(ctx context.Context) error { return s.client.Disconnect(ctx) }

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error { return s.client.Ping(ctx, nil) }

// Drop removes the product's collections (fresh runs and tests).
func (s *Store) Drop(ctx context.Context) error {
	for _, c := range []string{usageColl, checkpointColl} {
		if err := s.db.Collection(c).Drop(ctx); err != nil {
			return fmt.Errorf("store: drop %s: %w", c, err)
		}
	}
	return nil
}

// Checkpoint is consumer-usage's per-sensor memory.
type Checkpoint struct {
	SensorID string            `bson:"_id"`
	Message  telemetry.Message `bson:"message"`
	// Where Message was read: the guarded mode orders by Offset.
	Partition int32 `bson:"partition"`
	Offset    int64 `bson:"offset"`
	// The first message ever checkpointed for the sensor: the start of the
	// window consumer-usage is responsible for (used by the audit).
	FirstPartition int32     `bson:"first_partition"`
	FirstOffset    int64     `bson:"first_offset"`
	FirstTimestamp int64     `bson:"first_timestamp"`
	UpdatedAt      time.Time `bson:"updated_at"`
	// Summary folds the sensor's usage records 1..Summary.Records.
	Summary Summary `bson:"summary"`
	// Unsummarized: the document was written by a version that kept no
	// summary (its sensor's totals must be rebuilt from the records).
	Unsummarized bool `bson:"-"`
}

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

// LoadCheckpoints returns every sensor's checkpoint.
func (s *Store) LoadCheckpoints(ctx context.Context) (map[string]Checkpoint, error) {
	cur, err := s.db.Collection(checkpointColl).Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("store: load checkpoints: %w", err)
	}
	defer cur.Close(ctx)
	out := map[string]Checkpoint{}
	for cur.Next(ctx) {
		var cp Checkpoint
		if err := cur.Decode(&cp); err != nil {
			return nil, fmt.Errorf("store: load checkpoints: %w", err)
		}
		_, err := cur.Current.LookupErr("summary")
		cp.Unsummarized = err != nil
		out[cp.SensorID] = cp
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("store: load checkpoints: %w", err)
	}
	return out, nil
}

// ResumeCheckpoints is LoadCheckpoints for the writer that carries on from
// them: every orphan record (written after a sensor's last checkpoint write
// by a process that then died) is folded into its sensor's summary, so the
// next record gets the next free seq, and the checkpoint's message becomes
// the furthest orphan's reading, so the next delta is not counted twice;
// summaries a previous version never wrote are rebuilt from the records
// (one scan). A checkpoint that folded orphans is written back at once.
func (s *Store) ResumeCheckpoints(ctx context.Context) (map[string]Checkpoint, error) {
	cps, err := s.LoadCheckpoints(ctx)
	if err != nil {
		return nil, err
	}
	for _, cp := range cps {
		if cp.Unsummarized {
			if err := s.rebuildSummaries(ctx, cps); err != nil {
				return nil, err
			}
			break
		}
	}
	for id, cp := range cps {
		folded := false
		for {
			orphan, found, err := s.findUsage(ctx, RecordID(id, cp.Summary.Records+1))
			if err != nil {
				return nil, err
			}
			if !found {
				break
			}
			folded = true
			cp.Summary = cp.Summary.Fold(orphan)
			if orphan.Reading != nil && orphan.Partition == cp.Partition && orphan.Offset > cp.Offset {
				// The checkpoint is behind a record it misses (a writer
				// died between them, or a late writer moved it back): the
				// next delta starts where that record ended.
				cp.Message, cp.Offset = *orphan.Reading, orphan.Offset
			}
		}
		if folded {
			// Made durable now: the messages up to the new offset are
			// skipped as applied, so no later write of theirs would.
			if err := s.SaveCheckpoint(ctx, cp); err != nil {
				return nil, err
			}
		}
		cps[id] = cp
	}
	return cps, nil
}

func (s *Store) rebuildSummaries(ctx context.Context, cps map[string]Checkpoint) error {
	sums, err := s.scanSummaries(ctx)
	if err != nil {
		return err
	}
	for id, cp := range cps {
		if cp.Unsummarized {
			cp.Summary, cp.Unsummarized = sums[id], false
			cps[id] = cp
		}
	}
	return nil
}

func checkpointUpdate(cp Checkpoint) bson.D {
	// The window starts at the sensor's first message: cp's First fields
	// when set (a batch writes a new sensor's checkpoint at its last
	// message of the batch, after records of the ones before it), else cp.
	partition, offset, timestamp := cp.FirstPartition, cp.FirstOffset, cp.FirstTimestamp
	if timestamp == 0 {
		partition, offset, timestamp = cp.Partition, cp.Offset, cp.Message.Timestamp
	}
	return bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "message", Value: cp.Message},
			{Key: "partition", Value: cp.Partition},
			{Key: "offset", Value: cp.Offset},
			{Key: "summary", Value: cp.Summary},
			{Key: "updated_at", Value: time.Now().UTC()},
		}},
		{Key: "$setOnInsert", Value: bson.D{
			{Key: "first_partition", Value: partition},
			{Key: "first_offset", Value: offset},
			{Key: "first_timestamp", Value: timestamp},
		}},
	}
}

// SaveCheckpoint is the seed's update_one(upsert=True): unconditional
// overwrite, even with an older message. Guarded mode writes it the same
// way: on FerretDB v1 a filter of anything but _id reads every checkpoint
// (12 ms an update at 100 sensors, against 3 ms by _id), and a conditional
// update is not atomic there anyway. What keeps guarded mode exact when a
// late writer moves a checkpoint back is the records: their seqs are
// unique and each carries the reading it ends at, so ResumeCheckpoints
// folds what the checkpoint misses and takes the base from the furthest.
func (s *Store) SaveCheckpoint(ctx context.Context, cp Checkpoint) error {
	_, err := s.db.Collection(checkpointColl).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: cp.SensorID}}, checkpointUpdate(cp),
		options.Update().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("store: save checkpoint %s: %w", cp.SensorID, err)
	}
	return nil
}

// UsageRecord is one saved delta.
type UsageRecord struct {
	// ID is RecordID(sensor, Seq), set by AppendUsage.
	ID              string `bson:"_id"`
	telemetry.Usage `bson:",inline"`
	Seq             int64 `bson:"seq"`
	// Effect identifies what wrote the record: in guarded mode the message
	// (EffectID), in naive mode the one write (WriteID), as the seed's
	// insert_one does with a fresh ObjectID.
	Effect string `bson:"effect"`
	// Write identifies the write that made the record (guarded: one per
	// batch, kept across its retries): finding its own record at a seq is
	// not a second effect. FerretDB v1 applies documents of an ordered
	// insert that come after a duplicate key (a batch whose first record is
	// another writer's still inserts its later ones), so the records after
	// the error can be the write's own.
	Write string `bson:"write,omitempty"`
	// Reading is the message the delta ends at (nil in records of older
	// versions): the next delta's base if the checkpoint is behind it.
	Reading   *telemetry.Message `bson:"reading,omitempty"`
	Partition int32              `bson:"partition"`
	Offset    int64              `bson:"offset"`
	CreatedAt time.Time          `bson:"created_at"`
	// Writer names the process that wrote the record (its instance and
	// start, Writer), and BaseTimestamp the reading the delta was taken
	// from: for the audit's account of a drift only, never read back by a
	// consumer.
	Writer        string `bson:"writer,omitempty"`
	BaseTimestamp int64  `bson:"base_ts,omitempty"`
}

// Writer names one consumer-usage process in its records: its instance
// and when it started ("instance@RFC 3339"), so two lives of one instance
// stay apart.
func Writer(instance string, started time.Time) string {
	return instance + "@" + started.UTC().Format(time.RFC3339Nano)
}

// RecordID is the _id of a sensor's seq-th usage record (seq from 1).
func RecordID(sensorID string, seq int64) string { return fmt.Sprintf("%s#%d", sensorID, seq) }

// EffectID is the durable identity of the delta that the message at
// topic/partition/offset produces: at most one record per message.
func EffectID(topic string, partition int32, offset int64) string {
	return fmt.Sprintf("%s/%d/%d", topic, partition, offset)
}

// WriteID is a fresh identity for one naive write: a retry of the same
// write recognises its own record, anything else adds one.
func WriteID() string { return "write/" + primitive.NewObjectID().Hex() }

// ErrNoIdentity guards AppendUsage against an unset effect identity.
var ErrNoIdentity = errors.New("store: usage record without an effect identity")

// Appended is what AppendUsage did: Summary folds every record of the
// sensor through the appended one; New is false when the effect was
// already recorded by another write (a replay, another owner).
type Appended struct {
	Summary Summary
	New     bool
}

// AppendUsage saves rec as its sensor's next record after sum (the
// sensor's summary as of its last checkpoint). The insert is a single
// unique insert under RecordID(sensor, seq): if that seq is taken, the
// record there is folded into the summary (an orphan of a dead writer, or
// this effect itself), and the next seq is tried. The caller writes the
// returned summary with the sensor's checkpoint.
func (s *Store) AppendUsage(ctx context.Context, sum Summary, rec UsageRecord) (Appended, error) {
	if rec.Effect == "" {
		return Appended{}, ErrNoIdentity
	}
	for {
		rec.Seq = sum.Records + 1
		rec.ID = RecordID(rec.SensorID, rec.Seq)
		rec.CreatedAt = time.Now().UTC()
		_, err := s.db.Collection(usageColl).InsertOne(ctx, rec)
		if err == nil {
			return Appended{Summary: sum.Fold(rec), New: true}, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return Appended{}, fmt.Errorf("store: insert usage %s: %w", rec.ID, err)
		}
		there, found, err := s.findUsage(ctx, rec.ID)
		if err != nil {
			return Appended{}, err
		}
		if !found {
			return Appended{}, fmt.Errorf("store: insert usage %s: duplicate key, but no record has it", rec.ID)
		}
		sum = sum.Fold(there)
		if there.Effect == rec.Effect {
			// New only if this write made it (an earlier attempt whose answer
			// was lost, or an ordered insert applied past its error).
			return Appended{Summary: sum, New: rec.Write != "" && there.Write == rec.Write}, nil
		}
	}
}

// Batch is what AppendUsageBatch did: each sensor's summary through its
// last record of the batch, and per record whether it was new.
type Batch struct {
	Summaries map[string]Summary
	New       []bool
}

// AppendUsageBatch is AppendUsage for many records in one ordered insert
// (FerretDB v1 inserts 1,000 documents in about the time of 20 single
// inserts). sums holds the summary before the batch of every sensor with a
// record in it; recs are in the order their messages were read, so a
// sensor's records take consecutive seqs. Where the insert stops at a seq
// already taken, the records before it are in, and that record and every
// one after it go through AppendUsage, which folds what it finds there.
func (s *Store) AppendUsageBatch(ctx context.Context, sums map[string]Summary, recs []UsageRecord) (Batch, error) {
	out := Batch{Summaries: maps.Clone(sums), New: make([]bool, len(recs))}
	docs := make([]any, len(recs))
	now := time.Now().UTC()
	for i, rec := range recs {
		if rec.Effect == "" {
			return Batch{}, ErrNoIdentity
		}
		sum := out.Summaries[rec.SensorID]
		rec.Seq = sum.Records + 1
		rec.ID = RecordID(rec.SensorID, rec.Seq)
		rec.CreatedAt = now
		docs[i] = rec
		out.Summaries[rec.SensorID] = sum.Fold(rec)
	}
	if len(docs) == 0 {
		return out, nil
	}
	_, err := s.db.Collection(usageColl).InsertMany(ctx, docs, options.InsertMany().SetOrdered(true))
	if err == nil {
		for i := range out.New {
			out.New[i] = true
		}
		return out, nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) == 0 || !mongo.IsDuplicateKeyError(err) {
		return Batch{}, fmt.Errorf("store: insert %d usage records: %w", len(docs), err)
	}
	stop := bwe.WriteErrors[0].Index
	for _, we := range bwe.WriteErrors {
		stop = min(stop, we.Index)
	}
	out.Summaries = maps.Clone(sums)
	for i, rec := range recs {
		if i < stop {
			out.Summaries[rec.SensorID] = out.Summaries[rec.SensorID].Fold(docs[i].(UsageRecord))
			out.New[i] = true
			continue
		}
		app, err := s.AppendUsage(ctx, out.Summaries[rec.SensorID], rec)
		if err != nil {
			return Batch{}, err
		}
		out.Summaries[rec.SensorID], out.New[i] = app.Summary, app.New
	}
	return out, nil
}

func (s *Store) findUsage(ctx context.Context, id string) (UsageRecord, bool, error) {
	var rec UsageRecord
	err := s.db.Collection(usageColl).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&rec)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return UsageRecord{}, false, nil
	}
	if err != nil {
		return UsageRecord{}, false, fmt.Errorf("store: find usage %s: %w", id, err)
	}
	return rec, true, nil
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

// UsageOffsets lists, per sensor, where each usage record came from: for a
// test that must say which messages have no record, not only how many.
func (s *Store) UsageOffsets(ctx context.Context) (map[string][]Position, error) {
	proj := options.Find().SetProjection(bson.D{
		{Key: "sensor_id", Value: 1}, {Key: "partition", Value: 1}, {Key: "offset", Value: 1}})
	cur, err := s.db.Collection(usageColl).Find(ctx, bson.D{}, proj)
	if err != nil {
		return nil, fmt.Errorf("store: usage offsets: %w", err)
	}
	defer cur.Close(ctx)
	out := map[string][]Position{}
	for cur.Next(ctx) {
		var rec struct {
			SensorID  string `bson:"sensor_id"`
			Partition int32  `bson:"partition"`
			Offset    int64  `bson:"offset"`
		}
		if err := cur.Decode(&rec); err != nil {
			return nil, fmt.Errorf("store: usage offsets: %w", err)
		}
		out[rec.SensorID] = append(out[rec.SensorID], Position{Partition: rec.Partition, Offset: rec.Offset})
	}
	return out, cur.Err()
}

// DropDatabase removes the whole database (a workshop lab that is gone).
func (s *Store) DropDatabase(ctx context.Context) error {
	if err := s.db.Drop(ctx); err != nil {
		return fmt.Errorf("store: drop database %s: %w", s.db.Name(), err)
	}
	return nil
}

// Exists reports whether the store holds the database.
func (s *Store) Exists(ctx context.Context) (bool, error) {
	names, err := s.client.ListDatabaseNames(ctx, bson.M{"name": s.db.Name()})
	if err != nil {
		return false, fmt.Errorf("store: list databases: %w", err)
	}
	return len(names) > 0, nil
}
