package board

import (
	"testing"
)

// TestRefreshedSince: a report taken after wait-caught-up must rest on
// answers read after the caught-up moment, with the audit through the
// watermarks; an answer from before, or an audit still behind, is not enough.
func TestRefreshedSince(t *testing.T) {
	hwm := map[int32]int64{0: 10, 1: 0}
	base := []any{
		ProcStarted{Name: Current, PID: 1, At: at(0)},
		ProcStarted{Name: Query, PID: 2, At: at(0)},
		SensorsSnapshot{At: at(1)},
		UsageSnapshot{At: at(1)},
		TruthSnapshot{At: at(1), AuditThrough: map[int32]int64{0: 10}},
	}
	tests := []struct {
		name   string
		inputs []any
		want   bool
	}{
		{name: "only answers from before", want: false},
		{name: "every answer again, audit through", want: true, inputs: []any{
			SensorsSnapshot{At: at(3)}, UsageSnapshot{At: at(3)},
			TruthSnapshot{At: at(3), AuditThrough: map[int32]int64{0: 10}}}},
		{name: "audit behind the watermarks", want: false, inputs: []any{
			SensorsSnapshot{At: at(3)}, UsageSnapshot{At: at(3)},
			TruthSnapshot{At: at(3), AuditThrough: map[int32]int64{0: 9}}}},
		{name: "usage not read again", want: false, inputs: []any{
			SensorsSnapshot{At: at(3)},
			TruthSnapshot{At: at(3), AuditThrough: map[int32]int64{0: 10}}}},
		{name: "consumer-query down: its usage is not waited for", want: true, inputs: []any{
			ProcExited{Name: Query, PID: 2, At: at(2), Signal: "SIGKILL"},
			SensorsSnapshot{At: at(3)},
			TruthSnapshot{At: at(3), AuditThrough: map[int32]int64{0: 10}}}},
		{name: "state answer failed", want: false, inputs: []any{
			SensorsSnapshot{At: at(3), Err: errString("refused")}, UsageSnapshot{At: at(3)},
			TruthSnapshot{At: at(3), AuditThrough: map[int32]int64{0: 10}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBoard(append(append([]any{}, base...), tc.inputs...)...)
			if got := b.RefreshedSince(at(2), hwm); got != tc.want {
				t.Fatalf("RefreshedSince = %v, want %v", got, tc.want)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
