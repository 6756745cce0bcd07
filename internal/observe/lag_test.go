package observe

import (
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func TestGroupLag(t *testing.T) {
	hwm := map[int32]int64{0: 100, 1: 50, 2: 10, 3: 7}
	committed := map[int32]int64{0: 90, 1: 60, 2: -1} // 1: stale watermark; 2: no commit; 3: absent
	got := GroupLag(hwm, committed)
	want := []PartitionLag{
		{Partition: 0, HighWatermark: 100, Offset: 90, Lag: 10, Known: true},
		{Partition: 1, HighWatermark: 50, Offset: 60, Lag: 0, Known: true},
		{Partition: 2, HighWatermark: 10, Offset: -1},
		{Partition: 3, HighWatermark: 7, Offset: -1},
	}
	if got.Total != 10 || got.Unknown != 2 || got.AllKnown() || len(got.Partitions) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got.Partitions[i] != want[i] {
			t.Errorf("partition %d: got %+v, want %+v", i, got.Partitions[i], want[i])
		}
	}
}

func TestGroupLagNoWatermark(t *testing.T) {
	got := GroupLag(nil, map[int32]int64{0: 5})
	if got.Total != 0 || got.Unknown != 1 || got.Partitions[0].Known {
		t.Fatalf("got %+v", got)
	}
	if GroupLag(nil, nil).AllKnown() {
		t.Fatal("no partitions at all must not read as complete")
	}
}

func TestPositionLagUsesCurrentWatermark(t *testing.T) {
	hwm := map[int32]int64{0: 500, 1: 300}
	// The consumer's own high_watermark is stale (it died at 200): the lag
	// must grow with the real log, not freeze.
	pos := []status.Position{{Partition: 0, Offset: 200, HighWatermark: 200}, {Partition: 1, Offset: 300, HighWatermark: 300}}
	got := PositionLag(hwm, pos)
	if got.Total != 300 || !got.AllKnown() || got.Partitions[0].Lag != 300 || got.Partitions[1].Lag != 0 {
		t.Fatalf("got %+v", got)
	}
	got = PositionLag(map[int32]int64{0: 500, 1: 300, 2: 9}, pos[:1])
	if got.Total != 300 || got.Unknown != 2 {
		t.Fatalf("unreported partitions: got %+v", got)
	}
}
