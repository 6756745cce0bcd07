package audit

import (
	"context"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// TakeCut is the consistent comparison of one read of the recorded usage
// (covered: consumer-query's answer or store.UsageCoverage) and the
// checkpoints read after it, with the audit: it waits up to wait for the
// audit to read as far as every sensor's records (a moment's lag of the
// reader is not shown as pending), then returns the truth it compared with
// and each sensor's cut (ExpectedForCut).
func (r *Reader) TakeCut(ctx context.Context, wait time.Duration, covered map[string]store.Covered,
	checkpoints map[string]store.Checkpoint) (Truth, map[string]Cut) {
	truth := r.SnapshotWhen(ctx, wait, func(t Truth) bool {
		return !Behind(ExpectedForCut(t, covered, checkpoints))
	})
	return truth, ExpectedForCut(truth, covered, checkpoints)
}

// Behind reports whether the audit has not yet read as far as some
// sensor's records in cut.
func Behind(cut map[string]Cut) bool {
	for _, c := range cut {
		if c.State == AuditBehind {
			return true
		}
	}
	return false
}
