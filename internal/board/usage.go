package board

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

func (b *Board) usageSnapshot(v UsageSnapshot) {
	if v.Err != nil {
		if b.usageRead.err == nil || b.usageRead.errAt.Before(b.usageRead.at) {
			if p := b.procs[Query]; p != nil && p.alive() && p.pending == "" {
				b.event(v.At, Query, LevelWarn, "GET /usage failed: "+v.Err.Error())
			}
		}
		b.usageRead.err, b.usageRead.errAt = v.Err, v.At
		return
	}
	if b.usageRead.err != nil && b.usageRead.seen {
		b.event(v.At, Query, LevelGood, "usage answers again")
	}
	b.usageRead.err = nil
	b.usage = map[string]UsageTotals{}
	for _, u := range v.Sensors {
		u.Causes = b.retentionCauses(u.Causes)
		b.usage[u.SensorID] = u
	}
	b.usageRead.at = v.At
	b.usageRead.seen = true
	b.noteCauseGroups(v.At)
	if v.ExpectErr != nil && b.expectErr == nil {
		b.event(v.At, "", LevelWarn, "cannot compare usage with the audit: "+v.ExpectErr.Error())
	}
	b.expectErr = v.ExpectErr
	b.noteMalformed(v)
}

// noteMalformed says on the timeline, whenever their count changes, how
// many records break the schema and why: they are never summed, and
// never dropped silently either.
func (b *Board) noteMalformed(v UsageSnapshot) {
	if maps.Equal(v.Malformed, b.malformed) {
		return
	}
	b.malformed = maps.Clone(v.Malformed)
	var parts []string
	n := 0
	for _, why := range slices.Sorted(maps.Keys(v.Malformed)) {
		parts = append(parts, fmt.Sprintf("%s: %d (e.g. %s)", why, v.Malformed[why], v.Example[why]))
		n += v.Malformed[why]
	}
	if n > 0 {
		b.event(v.At, Usage, LevelWarn, fmt.Sprintf("wrote %s that break the schema, not counted as usage: %s",
			Plural(int64(n), "usage record"), strings.Join(parts, "; ")))
	}
}

// MalformedRecords is the latest usage read's records that break the
// schema, by reason.
func (b *Board) MalformedRecords() map[string]int { return maps.Clone(b.malformed) }

func (b *Board) truthSnapshot(v TruthSnapshot) {
	if b.before(v.At) {
		return
	}
	if v.Err != nil {
		if b.truthRead.err == nil {
			b.pollFailed(v.At, "", "audit reader failed: ", v.Err)
		}
		b.truthRead.err = v.Err
		return
	}
	b.truthRead.err = nil
	b.truth = map[string]Truth{}
	for _, t := range v.Sensors {
		if t.Last != nil {
			last := *t.Last
			t.Last = &last
		}
		t.Partitions = slices.Clone(t.Partitions)
		b.truth[t.SensorID] = t
	}
	b.truthRead.at = v.At
	b.truthRead.seen = true
	b.auditCount = v.AuditOffset
	b.auditThrough = maps.Clone(v.AuditThrough)
	b.noteMoves(v)
	b.auditSkipped(v.At, v.Skipped)
}

// AuditKeys is what the audit last read about every sensor's key in the
// topic: where its records are and whether their order held.
func (b *Board) AuditKeys() map[string]Truth {
	out := make(map[string]Truth, len(b.truth))
	for id, t := range b.truth {
		t.Partitions = slices.Clone(t.Partitions)
		out[id] = t
	}
	return out
}

// Verdict classifies a drift.
type Verdict string

const (
	VerdictNone  Verdict = ""             // no drift to judge (no answer or no window)
	VerdictExact Verdict = "exact"        // recorded equals expected, to the cent
	VerdictOver  Verdict = "over-counted" // recorded more than happened (duplicated effects)
	VerdictLost  Verdict = "lost"         // recorded less than happened (skipped effects)
	VerdictMixed Verdict = "mixed"        // one counter over, the other under
	// VerdictPending: the audit has not yet read as far as the records the
	// usage answer covered; there is nothing to compare yet (not a drift).
	VerdictPending Verdict = "pending"
)

// Level is how a view should colour the verdict.
func (v Verdict) Level() Level {
	switch v {
	case VerdictExact:
		return LevelGood
	case VerdictOver:
		return LevelWarn
	case VerdictLost, VerdictMixed:
		return LevelBad
	}
	return LevelInfo
}

// Amount is hours and km of usage, in hundredths.
type Amount struct {
	HoursCents int64
	KmCents    int64
}

// Hours and Km return the amount in units.
func (a Amount) Hours() float64 { return float64(a.HoursCents) / 100 }
func (a Amount) Km() float64    { return float64(a.KmCents) / 100 }

// Hours and Km return the totals in units.
func (u UsageTotals) Hours() float64 { return float64(u.HoursCents) / 100 }
func (u UsageTotals) Km() float64    { return float64(u.KmCents) / 100 }

// Drift is recorded − expected, exact to the cent.
type Drift struct {
	HoursCents int64
	KmCents    int64
}

// Hours and Km return the drift in units.
func (d Drift) Hours() float64 { return float64(d.HoursCents) / 100 }
func (d Drift) Km() float64    { return float64(d.KmCents) / 100 }

// Verdict classifies the drift by its sign alone (exact, over-counted,
// lost, mixed). Recorded and expected describe the same records, so the
// sign is the verdict at once; the usage panel adds pending when the audit
// has not read that far yet.
func (d Drift) Verdict() Verdict {
	over := d.HoursCents > 0 || d.KmCents > 0
	under := d.HoursCents < 0 || d.KmCents < 0
	switch {
	case over && under:
		return VerdictMixed
	case over:
		return VerdictOver
	case under:
		return VerdictLost
	}
	return VerdictExact
}

// UsageRow is one sensor in the usage panel.
type UsageRow struct {
	SensorID string
	// Recorded: what consumer-query answers (nil while it cannot answer).
	Recorded *UsageTotals
	// Expected: the audit's usage over exactly the records Recorded covers
	// (nil while consumer-query cannot answer, when NoWindow, or while the
	// audit has not read that far: Verdict is then VerdictPending).
	Expected *Amount
	// NoWindow: consumer-usage has no checkpoint of the sensor yet (or its
	// records do not fit one window), so no usage is expected.
	NoWindow bool
	Drift    *Drift
	// Verdict is what the panel shows: Drift.Verdict(), or VerdictPending.
	Verdict Verdict
	// Causes: the messages that make Drift (their drifts add up to it);
	// CausesErr when they could not be read.
	Causes    []Cause
	CausesErr error
}

// UsageView is the usage panel: recorded vs expected per sensor and in total.
type UsageView struct {
	Status Freshness // of consumer-query's answers
	Reason string
	AsOf   time.Time
	// Truth is Waiting until the audit's first snapshot, Failing when its
	// latest read failed (its last values are still shown).
	Truth       Freshness
	TruthReason string
	AuditCount  int64 // messages the audit has read
	// AuditSkipped: messages deleted before the audit read them.
	AuditSkipped int64
	Rows         []UsageRow
	Total        UsageRow
}

// UsageView returns the usage panel state.
func (b *Board) Usage() UsageView {
	v := UsageView{AsOf: b.usageRead.at, AuditCount: b.auditCount, AuditSkipped: b.ret.auditSkippedCount()}
	v.Status, v.Reason = b.queryFreshness()
	v.Truth, v.TruthReason = b.truthFreshness()
	recorded := v.Status == Live || v.Status == Stale

	ids := map[string]bool{}
	for id := range b.truth {
		ids[id] = true
	}
	if recorded {
		for id := range b.usage {
			ids[id] = true
		}
	}
	var verdicts []Verdict
	tot := UsageRow{SensorID: "total"}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		r := UsageRow{SensorID: id}
		if recorded {
			b.recordedRow(&r, &tot)
		}
		if r.Recorded != nil && r.Expected != nil {
			d := Drift{
				HoursCents: r.Recorded.HoursCents - r.Expected.HoursCents,
				KmCents:    r.Recorded.KmCents - r.Expected.KmCents,
			}
			r.Drift = &d
			r.Verdict = d.Verdict()
			if tot.Drift == nil {
				tot.Drift = &Drift{}
			}
			tot.Drift.HoursCents += d.HoursCents
			tot.Drift.KmCents += d.KmCents
		}
		if r.Verdict != VerdictNone {
			verdicts = append(verdicts, r.Verdict)
		}
		v.Rows = append(v.Rows, r)
	}
	tot.Verdict = combine(verdicts)
	v.Total = tot
	return v
}

// queryFreshness is how fresh consumer-query's answers are, and why.
func (b *Board) queryFreshness() (Freshness, string) {
	if b.cfg.UsageCmd != "" {
		return b.yoursFreshness()
	}
	p := b.procs[Query]
	switch {
	case p == nil:
		return Down, "consumer-query is not supervised"
	case !p.alive() || p.state == Crashing || p.state == Stopping || p.state == Restarting:
		label, _ := b.stateLabel(p)
		return Down, "consumer-query is " + label + ": no answers until it is back"
	case b.usageRead.err != nil && !b.usageRead.errAt.Before(b.usageRead.at):
		return Failing, "consumer-query answers an error: " + b.usageRead.err.Error()
	case !b.usageRead.seen || b.usageRead.at.Before(p.startedAt):
		return Waiting, "waiting for consumer-query's first answer"
	case !b.now.IsZero() && b.now.Sub(b.usageRead.at) > StaleAfter:
		return Stale, fmt.Sprintf("no answer from consumer-query for %s", roundSecs(b.now.Sub(b.usageRead.at)))
	}
	return Live, "live"
}

// yoursFreshness is queryFreshness when the lab reads the records of the
// user's consumer-usage itself: consumer-query serves them too, but the
// panel does not wait on it.
func (b *Board) yoursFreshness() (Freshness, string) {
	switch {
	case b.usageRead.err != nil && !b.usageRead.errAt.Before(b.usageRead.at):
		return Failing, "reading your consumer's records failed: " + b.usageRead.err.Error()
	case !b.usageRead.seen:
		return Waiting, "waiting for the first read of your consumer's records"
	case !b.now.IsZero() && b.now.Sub(b.usageRead.at) > StaleAfter:
		return Stale, fmt.Sprintf("your consumer's records not read for %s", roundSecs(b.now.Sub(b.usageRead.at)))
	}
	return Live, "live"
}

// truthFreshness is how fresh the audit's truth is, and why.
func (b *Board) truthFreshness() (Freshness, string) {
	switch {
	case !b.truthRead.seen && b.truthRead.err != nil:
		return Failing, "audit failed: " + b.truthRead.err.Error()
	case !b.truthRead.seen:
		return Waiting, "audit reading the topic"
	case b.truthRead.err != nil && b.brokerKnownAway():
		return Failing, b.brokerAwayText() + ", audit showing its last read"
	case b.truthRead.err != nil:
		return Failing, "audit failed, showing its last read: " + plainError("kafka", b.truthRead.err.Error())
	case b.expectErr != nil:
		return Failing, "cannot compare with the audit: " + b.expectErr.Error()
	}
	return Live, "audit read " + Plural(b.auditCount, "message")
}

// recordedRow fills sensor row r with what consumer-query recorded and what
// the audit expects of it, and adds them to the total.
func (b *Board) recordedRow(r, tot *UsageRow) {
	u, ok := b.usage[r.SensorID]
	if !ok {
		u = UsageTotals{SensorID: r.SensorID} // no records yet: zero, not unknown
	}
	r.Recorded = &u
	if tot.Recorded == nil {
		tot.Recorded = &UsageTotals{SensorID: "total"}
	}
	tot.Recorded.HoursCents += u.HoursCents
	tot.Recorded.KmCents += u.KmCents
	tot.Recorded.Records += u.Records
	switch u.Expect {
	case ExpectReady:
		r.Expected = &Amount{HoursCents: u.ExpectedHoursCents, KmCents: u.ExpectedKmCents}
		r.Causes, r.CausesErr = u.Causes, u.CausesErr
		if tot.Expected == nil {
			tot.Expected = &Amount{}
		}
		tot.Expected.HoursCents += u.ExpectedHoursCents
		tot.Expected.KmCents += u.ExpectedKmCents
	case ExpectPending:
		r.Verdict = VerdictPending
	default:
		r.NoWindow = b.expectErr == nil
	}
}

// combine is the total's verdict: exact only if every sensor is exact, and
// a total that hides an over-count in one sensor and a loss in another is
// "mixed", not "exact"; pending while any sensor waits for the audit and
// none is off.
func combine(vs []Verdict) Verdict {
	if len(vs) == 0 {
		return VerdictNone
	}
	has := map[Verdict]bool{}
	for _, v := range vs {
		has[v] = true
	}
	over := has[VerdictOver] || has[VerdictMixed]
	lost := has[VerdictLost] || has[VerdictMixed]
	switch {
	case over && lost:
		return VerdictMixed
	case over:
		return VerdictOver
	case lost:
		return VerdictLost
	case has[VerdictPending]:
		return VerdictPending
	}
	return VerdictExact
}
