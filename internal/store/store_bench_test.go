package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// BenchmarkUsageCoverage measures consumer-query's answer (the summaries)
// next to a scan of the same records, on the embedded store: the dashboard
// asks every second, and the collection grows by one record per message
// that moved a machine (a 90-minute workshop writes about 45k).
//
//	go test ./internal/store -run '^$' -bench UsageCoverage -benchtime 5x
func BenchmarkUsageCoverage(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		st, uri := connect(b)
		fill(b, st, uri, n)
		b.Run(fmt.Sprintf("summaries/records=%d", n), func(b *testing.B) {
			benchCoverage(b, n, st.UsageCoverage)
		})
		b.Run(fmt.Sprintf("scan/records=%d", n), func(b *testing.B) {
			benchCoverage(b, n, st.RecordedCoverage)
		})
	}
}

func benchCoverage(b *testing.B, n int, read func(context.Context) (map[string]store.Covered, error)) {
	ctx := context.Background()
	for b.Loop() {
		cov, err := read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var recs int64
		for _, c := range cov {
			recs += c.Records
		}
		if recs != int64(n) {
			b.Fatalf("records %d, want %d", recs, n)
		}
	}
}

// fill writes n records over 10 sensors in batches (the store's appends
// are one insert each: too slow to set up 100k) with their summaries.
func fill(b *testing.B, st *store.Store, uri string, n int) {
	ctx := context.Background()
	c, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Disconnect(ctx)
	usage := c.Database("coverage").Collection("usage")
	sums := map[string]store.Summary{}
	var batch []any
	for i := range n {
		id := fmt.Sprintf("sensor-%02d", i%10+1)
		rec := store.UsageRecord{Usage: telemetry.Usage{SensorID: id, Date: "2026-11-29", DeltaHours: 0.12, DeltaKm: 0.5},
			Partition: int32(i % 3), Offset: int64(i), Effect: fmt.Sprintf("bench/%d", i)}
		rec.Seq = sums[id].Records + 1
		rec.ID = store.RecordID(id, rec.Seq)
		sums[id] = sums[id].Fold(rec)
		batch = append(batch, rec)
		if len(batch) == 1000 || i == n-1 {
			if _, err := usage.InsertMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for id, sum := range sums {
		if err := st.SaveCheckpoint(ctx, store.Checkpoint{SensorID: id, Summary: sum}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUsageRecordsFrom measures the attribution's read of one poll's
// new records (10 per sensor, the last 10 seqs of each) as the history
// grows, beside one read of every record: the dashboard reads only the new.
//
//	go test ./internal/store -run '^$' -bench UsageRecordsFrom -benchtime 5x
func BenchmarkUsageRecordsFrom(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		st, uri := connect(b)
		fill(b, st, uri, n)
		from, upTo := map[string]int64{}, map[string]int64{}
		for i := range 10 {
			id := fmt.Sprintf("sensor-%02d", i+1)
			upTo[id] = int64(n / 10)
			from[id] = upTo[id] - 10
		}
		b.Run(fmt.Sprintf("new/records=%d", n), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				got, err := st.UsageRecordsFrom(ctx, from, upTo)
				if err != nil || len(got) != 10 || len(got["sensor-01"]) != 10 {
					b.Fatalf("records %d sensors, err %v", len(got), err)
				}
			}
		})
		b.Run(fmt.Sprintf("all/records=%d", n), func(b *testing.B) {
			benchCoverage(b, n, st.RecordedCoverage)
		})
	}
}
