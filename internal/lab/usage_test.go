package lab

import (
	"reflect"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// A usage line carries recorded, covered offset and expectation of one cut.
func TestUsageLine(t *testing.T) {
	cov := store.Covered{Totals: store.Totals{HoursCents: 125, KmCents: 300, Records: 2},
		Through: store.Position{Partition: 2, Offset: 41}, Partitions: 1}
	tests := []struct {
		cut  audit.Cut
		want board.UsageTotals
	}{
		{audit.Cut{Covered: cov, HasFirst: true, State: audit.Expected, Expected: store.Totals{HoursCents: 100, KmCents: 300, Records: 2}},
			board.UsageTotals{SensorID: "s", HoursCents: 125, KmCents: 300, Records: 2, Partition: 2, Offset: 41,
				Expect: board.ExpectReady, ExpectedHoursCents: 100, ExpectedKmCents: 300}},
		{audit.Cut{Covered: cov, HasFirst: true, State: audit.AuditBehind},
			board.UsageTotals{SensorID: "s", HoursCents: 125, KmCents: 300, Records: 2, Partition: 2, Offset: 41, Expect: board.ExpectPending}},
		{audit.Cut{Covered: cov, State: audit.NoWindow},
			board.UsageTotals{SensorID: "s", HoursCents: 125, KmCents: 300, Records: 2, Partition: 2, Offset: 41, Expect: board.ExpectNone}},
	}
	for _, tc := range tests {
		if got := usageLine("s", cov, tc.cut); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %+v, want %+v", tc.cut.State, got, tc.want)
		}
	}
}
