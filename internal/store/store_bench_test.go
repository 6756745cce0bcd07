package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// BenchmarkUsageTotals measures consumer-query's one scan over the usage
// collection on the embedded store: the dashboard asks for it every second,
// and the collection grows by one record per message that moved a machine.
//
//	go test ./internal/store -run '^$' -bench UsageTotals -benchtime 5x
func BenchmarkUsageTotals(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 40_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			uri := embeddedtest.StartStore(b, "bench")
			ctx := context.Background()
			st, err := store.Connect(ctx, uri)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close(ctx)
			deadline := time.Now().Add(30 * time.Second)
			for st.Ping(ctx) != nil {
				if time.Now().After(deadline) {
					b.Fatal("store did not answer")
				}
				time.Sleep(50 * time.Millisecond) // waiting for a listener, not synchronising with a result
			}
			for i := 0; i < n; i++ {
				rec := store.UsageRecord{Usage: telemetry.Usage{SensorID: fmt.Sprintf("sensor-%02d", i%10+1),
					Date: "2026-11-29", DeltaHours: 0.12, DeltaKm: 0.5}}
				if err := st.InsertUsage(ctx, rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tot, err := st.UsageTotals(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var recs int64
				for _, t := range tot {
					recs += t.Records
				}
				if recs != int64(n) {
					b.Fatalf("records %d, want %d", recs, n)
				}
			}
		})
	}
}
