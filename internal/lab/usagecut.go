package lab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// resetState is how many reset-labs have begun and whether one is under way.
func (l *Lab) resetState() (resets int, resetting bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resets, l.resetting
}

// pollUsage takes one cut of the usage and hands it to the board as one
// input: consumer-query's answer (per sensor the totals and the furthest
// record they include, from each sensor's summary), consumer-usage's first
// checkpoint of each sensor, and the audit's usage over exactly the records
// that answer covered (audit's TakeCut). The checkpoints are read
// after the answer, so every sensor with records has its first checkpoint
// (it is written before its first record and never changes); the audit
// snapshot is taken last, as far along as it can be, and where it has not
// yet read as far as the records the line says so instead of a drift.
func (l *Lab) pollUsage(ctx context.Context) {
	if l.yours() {
		l.pollYoursUsage(ctx)
		return
	}
	addr := l.httpAddr(board.Query)
	if addr == "" {
		return
	}
	// A cut that straddles a reset-lab's drop would pair the old records
	// with the new (empty) checkpoints: skip it, the next poll is whole.
	epoch, resetting := l.resetState()
	if resetting {
		return
	}
	asked := time.Now()
	u, err := observe.FetchUsage(ctx, addr)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.UsageSnapshot{At: asked, Err: err}
	if err != nil {
		l.emit(snap)
		return
	}
	covered := u.CoveredBySensor()
	cps, cerr := l.checkpoints(ctx, epoch, covered)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	var cut map[string]audit.Cut
	var causes map[string][]audit.Cause
	var causesErr error
	if cerr != nil {
		snap.ExpectErr = fmt.Errorf("consumer-usage's checkpoints: %w", cerr)
	} else {
		// The audit reads the same topic on its own; give it a moment to
		// reach these records before calling any of them pending.
		var truth audit.Truth
		truth, cut = l.reader().TakeCut(ctx, 2*time.Second, covered, cps)
		causes, causesErr = l.attribute(ctx, epoch, truth, cut)
	}
	seen := map[string]bool{}
	line := func(id string, c store.Covered) board.UsageTotals {
		ul := usageLine(id, c, cut[id])
		if ul.Expect == board.ExpectReady {
			ul.Causes, ul.CausesErr = l.boardCausesOf(id, causes[id]), causesErr
		}
		return ul
	}
	for _, s := range u.Sensors {
		seen[s.SensorID] = true
		snap.Sensors = append(snap.Sensors, line(s.SensorID, s.Covered()))
	}
	for _, id := range slices.Sorted(maps.Keys(cut)) {
		if !seen[id] { // checkpointed, nothing recorded yet
			snap.Sensors = append(snap.Sensors, line(id, store.Covered{}))
		}
	}
	if e, r := l.resetState(); r || e != epoch {
		return
	}
	l.emit(snap)
}

// usageLine is one sensor's line of a usage cut.
func usageLine(id string, c store.Covered, cut audit.Cut) board.UsageTotals {
	line := board.UsageTotals{SensorID: id, HoursCents: c.HoursCents, KmCents: c.KmCents, Records: c.Records,
		Partition: c.Through.Partition, Offset: c.Through.Offset}
	switch cut.State {
	case audit.Expected:
		line.Expect = board.ExpectReady
		line.ExpectedHoursCents, line.ExpectedKmCents = cut.Expected.HoursCents, cut.Expected.KmCents
	case audit.AuditBehind:
		line.Expect = board.ExpectPending
	}
	return line
}
