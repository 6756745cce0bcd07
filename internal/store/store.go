// Package store is the one place that talks to MongoDB (or the embedded
// FerretDB, which speaks its wire protocol). Collections:
//
//	usage        one document per saved delta (the seed's usage records)
//	checkpoints  one document per sensor: the last message consumer-usage
//	             applied, and the first one it ever checkpointed
//
// FerretDB v1 silently computes only the first accumulator of a $group
// (FerretDB#4616) and is not atomic under concurrent updates, so totals are
// summed here in integer cents from one scan, and every write is a single
// document operation whose correctness does not depend on transactions.
package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

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
		return nil, fmt.Errorf("store: %w", err)
	}
	return &Store{client: client, db: client.Database(dbName)}, nil
}

func databaseName(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return "", fmt.Errorf("store: %q is not a mongodb:// URI", uri)
	}
	if name := strings.Trim(u.Path, "/"); name != "" {
		return name, nil
	}
	return DefaultDatabase, nil
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
}

// LoadCheckpoints returns every sensor's checkpoint.
func (s *Store) LoadCheckpoints(ctx context.Context) (map[string]Checkpoint, error) {
	cur, err := s.db.Collection(checkpointColl).Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("store: load checkpoints: %w", err)
	}
	var all []Checkpoint
	if err := cur.All(ctx, &all); err != nil {
		return nil, fmt.Errorf("store: load checkpoints: %w", err)
	}
	out := make(map[string]Checkpoint, len(all))
	for _, cp := range all {
		out[cp.SensorID] = cp
	}
	return out, nil
}

func checkpointUpdate(cp Checkpoint) bson.D {
	return bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "message", Value: cp.Message},
			{Key: "partition", Value: cp.Partition},
			{Key: "offset", Value: cp.Offset},
			{Key: "updated_at", Value: time.Now().UTC()},
		}},
		{Key: "$setOnInsert", Value: bson.D{
			{Key: "first_partition", Value: cp.Partition},
			{Key: "first_offset", Value: cp.Offset},
			{Key: "first_timestamp", Value: cp.Message.Timestamp},
		}},
	}
}

// SaveCheckpoint is the seed's update_one(upsert=True): unconditional
// overwrite, even with an older message (naive mode).
func (s *Store) SaveCheckpoint(ctx context.Context, cp Checkpoint) error {
	_, err := s.db.Collection(checkpointColl).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: cp.SensorID}}, checkpointUpdate(cp),
		options.Update().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("store: save checkpoint %s: %w", cp.SensorID, err)
	}
	return nil
}

// AdvanceCheckpoint moves a sensor's checkpoint forward only: it applies when
// no checkpoint exists or the stored one is at an earlier offset of the same
// partition. One single-document conditional upsert, so it is atomic on
// MongoDB without transactions; advanced=false means a newer checkpoint is
// already durable (the message was applied before).
func (s *Store) AdvanceCheckpoint(ctx context.Context, cp Checkpoint) (advanced bool, err error) {
	filter := bson.D{
		{Key: "_id", Value: cp.SensorID},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "partition", Value: bson.D{{Key: "$ne", Value: cp.Partition}}}},
			bson.D{{Key: "offset", Value: bson.D{{Key: "$lt", Value: cp.Offset}}}},
		}},
	}
	res, err := s.db.Collection(checkpointColl).UpdateOne(ctx, filter, checkpointUpdate(cp),
		options.Update().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		// The filter missed because the stored checkpoint is not older, and
		// the upsert then collided with it on _id.
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: advance checkpoint %s: %w", cp.SensorID, err)
	}
	return res.MatchedCount+res.UpsertedCount > 0, nil
}

// UsageRecord is one saved delta.
type UsageRecord struct {
	// ID is empty in naive mode (the driver assigns an ObjectID, as the
	// seed's insert_one does) and the effect identity in guarded mode.
	ID              string `bson:"_id,omitempty"`
	telemetry.Usage `bson:",inline"`
	Partition       int32     `bson:"partition"`
	Offset          int64     `bson:"offset"`
	CreatedAt       time.Time `bson:"created_at"`
}

// EffectID is the durable identity of the delta that the message at
// topic/partition/offset produces: at most one record per message.
func EffectID(topic string, partition int32, offset int64) string {
	return fmt.Sprintf("%s/%d/%d", topic, partition, offset)
}

// InsertUsage saves a delta record (naive mode: every call adds one).
func (s *Store) InsertUsage(ctx context.Context, rec UsageRecord) error {
	rec.ID = ""
	rec.CreatedAt = time.Now().UTC()
	if _, err := s.db.Collection(usageColl).InsertOne(ctx, rec); err != nil {
		return fmt.Errorf("store: insert usage %s: %w", rec.SensorID, err)
	}
	return nil
}

// ErrNoIdentity guards InsertUsageOnce against an unset identity.
var ErrNoIdentity = errors.New("store: usage record without an effect identity")

// InsertUsageOnce saves a delta record under its effect identity; a second
// insert of the same identity is a no-op reported as inserted=false.
func (s *Store) InsertUsageOnce(ctx context.Context, rec UsageRecord) (inserted bool, err error) {
	if rec.ID == "" {
		return false, ErrNoIdentity
	}
	rec.CreatedAt = time.Now().UTC()
	_, err = s.db.Collection(usageColl).InsertOne(ctx, rec)
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: insert usage %s: %w", rec.ID, err)
	}
	return true, nil
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

// Cents converts a 2-decimal value to exact hundredths.
func Cents(f float64) int64 { return int64(math.Round(f * 100)) }

// Position is where a record was read in the topic.
type Position struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
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
}

// UsageTotals sums every usage record per sensor (see UsageCoverage).
func (s *Store) UsageTotals(ctx context.Context) (map[string]Totals, error) {
	cov, err := s.UsageCoverage(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Totals, len(cov))
	for id, c := range cov {
		out[id] = c.Totals
	}
	return out, nil
}

// UsageCoverage sums every usage record per sensor and notes the furthest
// record summed, from the same read. One scan, summed here in integer
// cents: a multi-accumulator $group is silently wrong on FerretDB, and two
// queries would describe two different moments of a growing collection.
func (s *Store) UsageCoverage(ctx context.Context) (map[string]Covered, error) {
	proj := options.Find().SetProjection(bson.D{
		{Key: "sensor_id", Value: 1}, {Key: "delta_hours", Value: 1}, {Key: "delta_km", Value: 1},
		{Key: "partition", Value: 1}, {Key: "offset", Value: 1}})
	cur, err := s.db.Collection(usageColl).Find(ctx, bson.D{}, proj)
	if err != nil {
		return nil, fmt.Errorf("store: usage totals: %w", err)
	}
	defer cur.Close(ctx)
	out := map[string]Covered{}
	parts := map[string]map[int32]bool{}
	for cur.Next(ctx) {
		var rec struct {
			SensorID   string  `bson:"sensor_id"`
			DeltaHours float64 `bson:"delta_hours"`
			DeltaKm    float64 `bson:"delta_km"`
			Partition  int32   `bson:"partition"`
			Offset     int64   `bson:"offset"`
		}
		if err := cur.Decode(&rec); err != nil {
			return nil, fmt.Errorf("store: usage totals: %w", err)
		}
		c := out[rec.SensorID]
		c.HoursCents += Cents(rec.DeltaHours)
		c.KmCents += Cents(rec.DeltaKm)
		c.Records++
		if c.Records == 1 || rec.Offset > c.Through.Offset ||
			rec.Offset == c.Through.Offset && rec.Partition > c.Through.Partition {
			c.Through = Position{Partition: rec.Partition, Offset: rec.Offset}
		}
		ps := parts[rec.SensorID]
		if ps == nil {
			ps = map[int32]bool{}
			parts[rec.SensorID] = ps
		}
		ps[rec.Partition] = true
		c.Partitions = len(ps)
		out[rec.SensorID] = c
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("store: usage totals: %w", err)
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
