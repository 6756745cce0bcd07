package audit

import (
	"fmt"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// Class says which way a recorded total differs from the truth.
type Class int

const (
	// Exact: recorded equals expected.
	Exact Class = iota
	// OverCounted: recorded exceeds expected (a delta applied twice,
	// at-least-once replay without a guard).
	OverCounted
	// Lost: recorded is below expected (messages skipped, e.g. reset=latest
	// after a crash, or a delta never saved).
	Lost
)

func (c Class) String() string {
	switch c {
	case Exact:
		return "exact"
	case OverCounted:
		return "over-counted"
	case Lost:
		return "lost"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Classify names the sign of recorded - expected.
func Classify(diff int64) Class {
	switch {
	case diff > 0:
		return OverCounted
	case diff < 0:
		return Lost
	}
	return Exact
}

// Measure is the difference on one quantity, in hundredths (or records).
type Measure struct {
	// Diff is recorded - expected.
	Diff  int64
	Class Class
}

func measure(recorded, expected int64) Measure {
	return Measure{Diff: recorded - expected, Class: Classify(recorded - expected)}
}

// Discrepancy compares a consumer's recorded totals with the audit's.
// Hours and km are classified separately: a duplicate delta can carry km
// and no hours, so one can be exact while the other is over-counted.
type Discrepancy struct {
	Hours   Measure // hundredths of an hour
	Km      Measure // hundredths of a km
	Records Measure // number of usage records
}

// Exact reports whether hours, km and record count all match.
func (d Discrepancy) Exact() bool {
	return d.Hours.Class == Exact && d.Km.Class == Exact && d.Records.Class == Exact
}

// Drift compares recorded (what the store holds) with expected (what the
// audit computes from the topic) for one sensor or in total.
func Drift(recorded, expected store.Totals) Discrepancy {
	return Discrepancy{
		Hours:   measure(recorded.HoursCents, expected.HoursCents),
		Km:      measure(recorded.KmCents, expected.KmCents),
		Records: measure(recorded.Records, expected.Records),
	}
}
