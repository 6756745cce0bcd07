package usage

import (
	"context"
	"fmt"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// BenchmarkHandle: consumer-usage's per-message work on the embedded store
// (a usage record and a checkpoint per message that moved a machine), 10
// sensors, one message at a time as the consumer loop does.
//
//	go test ./consumers/usage -run '^$' -bench Handle -benchtime 2000x
func BenchmarkHandle(b *testing.B) {
	for _, mode := range []lesson.Mode{lesson.Naive, lesson.Guarded} {
		b.Run(string(mode), func(b *testing.B) {
			_, st := freshDB(b)
			p, _ := newTestProcessor(b, st, mode, nil)
			const sensors = 10
			i := 0
			for b.Loop() {
				s, k := i%sensors, i/sensors
				id := fmt.Sprintf("sensor-%02d", s+1)
				r := rec(id, int32(s%3), int64(i), reading(b, id, k, 10000+125*int64(k), 100000+1050*int64(k)))
				if _, err := p.Handle(context.Background(), r); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
		})
	}
}
