package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// attribute names the messages of every sensor's drift over cut, reading
// only the usage records the attribution has not read yet (and all of a
// sensor's again if its causes did not add up).
func (l *Lab) attribute(ctx context.Context, epoch int, truth audit.Truth, cut map[string]audit.Cut) (map[string][]audit.Cause, error) {
	if l.causes == nil || l.causesEpoch != epoch {
		l.causes, l.causesEpoch = audit.NewAttribution(), epoch
	}
	var causes map[string][]audit.Cause
	for range 2 {
		from, upTo := l.causes.Need(truth, cut)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		recs, err := l.db.UsageRecordsFrom(rctx, from, upTo)
		cancel()
		if err != nil {
			l.causes.Reset()
			return nil, fmt.Errorf("usage records: %w", err)
		}
		var bad []string
		causes, bad = l.causes.Apply(truth, cut, from, recs)
		if len(bad) == 0 {
			return causes, nil
		}
	}
	return causes, errors.New("the usage records do not add up to the totals consumer-query answered")
}

type convertedCauses struct {
	from *audit.Cause
	n    int
	to   []board.Cause
}

// boardCausesOf is sensor id's causes in the board's terms, converted once
// per change (a long naive replay has a cause per message).
func (l *Lab) boardCausesOf(id string, cs []audit.Cause) []board.Cause {
	if len(cs) == 0 {
		delete(l.boardCauses, id)
		return nil
	}
	if c, ok := l.boardCauses[id]; ok && c.from == &cs[0] && c.n == len(cs) {
		return c.to
	}
	if l.boardCauses == nil {
		l.boardCauses = map[string]convertedCauses{}
	}
	out := boardCauses(cs)
	l.boardCauses[id] = convertedCauses{from: &cs[0], n: len(cs), to: out}
	return out
}

// boardCauses is a sensor's causes in the board's terms.
func boardCauses(cs []audit.Cause) []board.Cause {
	out := make([]board.Cause, len(cs))
	for i, c := range cs {
		out[i] = board.Cause{Kind: string(c.Kind), Partition: c.Partition, Offset: c.Offset, Records: c.Records,
			Writer: c.Writer, BaseTimestamp: c.BaseTimestamp,
			RecordedHoursCents: c.Recorded.HoursCents, RecordedKmCents: c.Recorded.KmCents,
			ExpectedHoursCents: c.Expected.HoursCents, ExpectedKmCents: c.Expected.KmCents}
	}
	return out
}
