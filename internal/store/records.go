package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/bson/primitive"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

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
