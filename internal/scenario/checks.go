package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// between is a check comparing two marks: first taken before second.
func between(what, first, second string, eval func(first, second Observation) (bool, string)) Check {
	return Check{
		What:  what,
		Needs: []string{first, second},
		Eval:  func(m Marks) (bool, string) { return eval(m[first], m[second]) },
	}
}

// The checks of the catalog. Each one is a pure function of marks taken
// from the board, so the numbers it prints are the processes' own.

// stateIdentical: consumer-current's state after the replay is the state
// it had before the crash, sensor by sensor (same message: timestamp,
// odometers, position).
func stateIdentical(before, after string) Check {
	return between("state rebuilt identical to before the crash", before, after, func(b, a Observation) (bool, string) {
		was := map[string]board.SensorState{}
		for _, r := range b.Sensors.Rows {
			was[r.SensorID] = r.SensorState
		}
		same, total := 0, len(was)
		var differ []string
		for _, r := range a.Sensors.Rows {
			w, ok := was[r.SensorID]
			switch {
			case !ok:
				differ = append(differ, r.SensorID+" is new")
			case sameMessage(w, r.SensorState):
				same++
			default:
				differ = append(differ, fmt.Sprintf("%s: %s before, %s after", r.SensorID, describe(w), describe(r.SensorState)))
			}
		}
		if n := len(a.Sensors.Rows); n < total {
			differ = append(differ, fmt.Sprintf("%d sensors missing", total-n))
		}
		c := a.Proc(board.Current)
		obs := fmt.Sprintf("%d/%d sensors identical (same message: timestamp, hours, km, position), rebuilt in %s",
			same, total, seconds(c.Current.CaughtUpMillis))
		if len(differ) > 0 {
			obs += "; " + strings.Join(first(differ, 3), "; ")
		}
		return total > 0 && same == total && len(differ) == 0, obs
	})
}

func sameMessage(a, b board.SensorState) bool {
	return a.Timestamp == b.Timestamp && a.HoursTot == b.HoursTot && a.KmTot == b.KmTot &&
		a.Lat == b.Lat && a.Lon == b.Lon
}

func describe(s board.SensorState) string {
	return fmt.Sprintf("ts %d hours %.2f km %.2f", s.Timestamp, s.HoursTot, s.KmTot)
}

// replayedWholeTopic: the restarted consumer-current read every message of
// the (paused) topic from the beginning, under a group it never used.
func replayedWholeTopic(before, after string) Check {
	return between("replayed the whole topic from earliest, with a fresh group", before, after, func(b, a Observation) (bool, string) {
		was, now := b.Proc(board.Current), a.Proc(board.Current)
		topic := b.HWMSum()
		// Its count includes invalid messages: reading at least as many
		// as the topic holds means it started at the beginning.
		read := now.Current.CaughtUpMessages
		obs := fmt.Sprintf("read %s (the topic holds %s) in %s; group %s → %s",
			board.Plural(read, "message"), board.Count(topic), seconds(now.Current.CaughtUpMillis), orDash(was.GroupID), orDash(now.GroupID))
		ok := topic > 0 && read >= topic && now.GroupID != "" && now.GroupID != was.GroupID
		return ok, obs
	})
}

// replayWatchable: consumer-current's rebuild showed its progress (replaying
// N%, the progress bar) for at least least, so the lesson can be watched.
func replayWatchable(mark string, least time.Duration) Check {
	return Check{
		What:  fmt.Sprintf("the rebuild showed its progress for at least %s", least),
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			c := m[mark].Proc(board.Current)
			return c.Current.ReplayShown >= least, rebuiltWords(c)
		},
	}
}

// rebuilt names the rebuild consumer-current reported (its caught_up) and
// how long the board showed it replaying.
func rebuilt(o Observation) string { return rebuiltWords(o.Proc(board.Current)) }

func rebuiltWords(c board.ProcView) string {
	return fmt.Sprintf("rebuilt %s messages in %s in group %s; replaying on screen for %.1f s",
		board.Count(c.Current.CaughtUpMessages), seconds(c.Current.CaughtUpMillis), orDash(c.GroupID), c.Current.ReplayShown.Seconds())
}

// matchesAudit: consumer-current's state equals the independent audit's
// last message of every sensor.
func matchesAudit(mark string) Check {
	return Check{
		What:  "consumer-current agrees with an independent read of the topic",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			match := 0
			var off []string
			for _, r := range o.Sensors.Rows {
				if r.Truth == board.TruthMatch {
					match++
				} else {
					off = append(off, fmt.Sprintf("%s %s", r.SensorID, orDash(string(r.Truth))))
				}
			}
			obs := fmt.Sprintf("%d/%d sensors match the audit's last message (audit read %s)",
				match, len(o.Sensors.Rows), board.Plural(o.Usage.AuditCount, "message"))
			if len(off) > 0 {
				obs += "; " + strings.Join(first(off, 3), ", ")
			}
			return len(o.Sensors.Rows) > 0 && match == len(o.Sensors.Rows), obs
		},
	}
}

// lagGrewWhileDead: while consumer-usage was dead its committed offsets
// stayed where they were and the broker's lag grew with the log end.
func lagGrewWhileDead(crashed, dead string) Check {
	return between("the broker's lag grew while consumer-usage was dead", crashed, dead, func(c, d Observation) (bool, string) {
		lc, ld := c.Proc(board.Usage).Lag, d.Proc(board.Usage).Lag
		obs := fmt.Sprintf("lag %s → %s messages in %s; committed offsets Σ%d → Σ%d while the log end moved Σ%d → Σ%d",
			lagWords(lc), lagWords(ld), d.At.Sub(c.At).Round(100*time.Millisecond),
			c.CommittedSum(), d.CommittedSum(), c.HWMSum(), d.HWMSum())
		ok := lc.Known() && ld.Known() && ld.Messages > lc.Messages &&
			c.CommittedSum() == d.CommittedSum() && !d.Proc(board.Usage).Alive
		return ok, obs
	})
}

// resumedFromCommitted: the restarted consumer-usage began reading exactly
// at the offsets its group had committed: not at the end (latest would
// have skipped what it missed) and not at the beginning.
func resumedFromCommitted(dead, resumed string) Check {
	return between("resumed from the committed offsets (fixed group: Kafka remembered them)", dead, resumed, func(d, r Observation) (bool, string) {
		from, known := r.Proc(board.Usage).ReadFrom()
		committed := d.CommittedSum()
		obs := fmt.Sprintf("started reading at Σ%s, the offsets committed before the crash were Σ%d (the log end was Σ%d)",
			orUnknown(from, known), committed, d.HWMSum())
		return known && from == committed && d.CommitGroup == r.Proc(board.Usage).GroupID, obs
	})
}

// caughtUpAgain: after the restart consumer-usage read what it had
// missed and caught up with the log.
func caughtUpAgain(dead, resumed string) Check {
	return between("caught up again after the restart", dead, resumed, func(d, r Observation) (bool, string) {
		u := r.Proc(board.Usage)
		obs := fmt.Sprintf("the lag of %s messages was read: commits reached the log end %s after the restart (%s processed)",
			lagWords(d.Proc(board.Usage).Lag), since(r.At, u.StartedAt), board.Plural(u.Processed, "message"))
		return r.UsageCaughtUp && u.Processed > 0, obs
	})
}

// nothingLost: between two exact measurements no sensor's usage drift went
// down: every delta is recorded (over-counting is reported, not failed).
func nothingLost(before, after string) Check {
	return between("no usage lost: every delta is recorded", before, after, func(b, a Observation) (bool, string) {
		up, down, n := sensorsChanged(b, a)
		db, okb := b.totalDrift()
		da, oka := a.totalDrift()
		if !okb || !oka || n == 0 {
			return false, "no drift measured (usage or audit not available)"
		}
		obs := fmt.Sprintf("total drift %s → %s; lost usage on %d/%d sensors", driftWords(db), driftWords(da), down, n)
		if up > 0 {
			obs += fmt.Sprintf("; over-counted on %d (messages applied after the last auto-commit were applied again)", up)
		}
		return down == 0, obs
	})
}

// hitWindow: consumer-usage killed itself at the after-delta crash point:
// the usage record was written, the checkpoint was not.
func hitWindow(before, crashed, mode string) Check {
	return between("crashed inside the window ("+mode+"): after the delta write, before the checkpoint", before, crashed, func(b, c Observation) (bool, string) {
		u := c.Proc(board.Usage)
		hit, earlier := u.LastCrashPoint, b.Proc(board.Usage).LastCrashPoint
		if hit == nil || !hit.At.After(b.At.Add(-time.Second)) || (earlier != nil && !hit.At.After(earlier.At)) {
			return false, "no crash point reached since the step began"
		}
		exit := "still running"
		if u.LastExit != nil && !u.Alive {
			exit = "died by " + u.LastExit.Label()
		}
		obs := fmt.Sprintf("%s reached at partition %d offset %d, consumer-usage %s (mode %s)",
			hit.Point, hit.Partition, hit.Offset, exit, b.Proc(board.Usage).Usage.Mode)
		return hit.Point == "after-delta" && u.LastExit != nil && u.LastExit.Signal == "SIGKILL" && !u.Alive, obs
	})
}

// overCounted: the usage drift grew (recorded more than the topic's deltas)
// and no sensor lost usage between the two marks.
func overCounted(what, before, after string) Check {
	return between(what, before, after, func(b, a Observation) (bool, string) {
		up, down, n := sensorsChanged(b, a)
		db, okb := b.totalDrift()
		da, oka := a.totalDrift()
		if !okb || !oka {
			return false, "no drift measured (usage or audit not available)"
		}
		obs := fmt.Sprintf("total drift %s → %s (recorded − expected), over-counted on %d/%d sensors",
			driftWords(db), driftWords(da), up, n)
		if down > 0 {
			obs += fmt.Sprintf(", %d lost usage", down)
		}
		grew := da.HoursCents >= db.HoursCents && da.KmCents >= db.KmCents &&
			(da.HoursCents > db.HoursCents || da.KmCents > db.KmCents)
		return grew && up > 0 && down == 0, obs
	})
}

// driftUnchanged: no sensor's drift moved between the two marks.
func driftUnchanged(what, before, after string) Check {
	return between(what, before, after, func(b, a Observation) (bool, string) {
		up, down, n := sensorsChanged(b, a)
		db, okb := b.totalDrift()
		da, oka := a.totalDrift()
		if !okb || !oka || n == 0 {
			return false, "no drift measured (usage or audit not available)"
		}
		verdict := ""
		if da == (board.Drift{}) {
			verdict = ", exact"
		}
		obs := fmt.Sprintf("total drift %s → %s%s; %d/%d sensors unchanged", driftWords(db), driftWords(da), verdict, n-up-down, n)
		return up == 0 && down == 0, obs
	})
}

// replayedFromBeginning: consumer-usage's incarnation at the mark read the
// topic from offset 0 under a group it did not have at the previous mark
// (reset earliest picks a fresh one).
func replayedFromBeginning(previous, mark string) Check {
	return Check{
		What:  "replayed from the beginning under a fresh group (reset earliest)",
		Needs: []string{previous, mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			was, u := m[previous].Proc(board.Usage), o.Proc(board.Usage)
			from, known := u.ReadFrom()
			obs := fmt.Sprintf("%s group %s (was %s) started at offset Σ%s and read %s (the topic holds %s)",
				u.Usage.Mode, orDash(u.GroupID), orDash(was.GroupID), orUnknown(from, known), board.Plural(u.Processed+u.Invalid, "message"), board.Count(o.HWMSum()))
			return known && from == 0 && u.Usage.Reset == "earliest" && u.GroupID != "" && u.GroupID != was.GroupID, obs
		},
	}
}

// usageWentDark: while consumer-query was down the usage panel showed no
// totals at all, and said why.
func usageWentDark(mark string) Check {
	return Check{
		What:  "the usage panel went dark: no stale totals presented as live",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			shown := 0
			for _, r := range o.Usage.Rows {
				if r.Recorded != nil {
					shown++
				}
			}
			obs := fmt.Sprintf("usage panel %s: %q; %d recorded totals shown", o.Usage.Status, o.Usage.Reason, shown)
			return o.Usage.Status == board.Down && shown == 0 && o.Usage.Total.Recorded == nil, obs
		},
	}
}

// answersAtOnce: the restarted consumer-query answered right away, with
// totals that continued from what the store kept.
func answersAtOnce(before, back string) Check {
	return between("answered again at once, with nothing to rebuild", before, back, func(b, a Observation) (bool, string) {
		q := a.Proc(board.Query)
		wait := a.Usage.AsOf.Sub(q.StartedAt)
		var rb, ra int64
		if b.Usage.Total.Recorded != nil {
			rb = b.Usage.Total.Recorded.Records
		}
		if a.Usage.Total.Recorded != nil {
			ra = a.Usage.Total.Recorded.Records
		}
		obs := fmt.Sprintf("first answer %s after the restart (the dashboard asks every second); records %d before the crash → %d now",
			wait.Round(100*time.Millisecond), rb, ra)
		return !q.StartedAt.IsZero() && wait >= 0 && wait <= 5*time.Second && ra >= rb && ra > 0, obs
	})
}

// sensorsChanged counts sensors whose drift grew (up) or shrank (down)
// between two marks, among the n known in both.
func sensorsChanged(b, a Observation) (up, down, n int) {
	for _, r := range a.Usage.Rows {
		da, ok := a.drift(r.SensorID)
		if !ok {
			continue
		}
		db, ok := b.drift(r.SensorID)
		if !ok {
			// No drift before (no window yet): compare with exact.
			db = board.Drift{}
		}
		n++
		switch {
		case da.HoursCents > db.HoursCents || da.KmCents > db.KmCents:
			if da.HoursCents < db.HoursCents || da.KmCents < db.KmCents {
				down++ // mixed: counts as a loss
			} else {
				up++
			}
		case da.HoursCents < db.HoursCents || da.KmCents < db.KmCents:
			down++
		}
	}
	return up, down, n
}

func driftWords(d board.Drift) string {
	return fmt.Sprintf("%+.2f h / %+.2f km", d.Hours(), d.Km())
}

func lagWords(l board.Lag) string {
	if !l.Known() {
		return "?"
	}
	return fmt.Sprint(l.Messages)
}

func seconds(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) }

func since(t, from time.Time) string {
	if from.IsZero() || t.Before(from) {
		return "?"
	}
	return fmt.Sprintf("%.1f s", t.Sub(from).Seconds())
}

func orUnknown(v int64, known bool) string {
	if !known {
		return "?"
	}
	return fmt.Sprint(v)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}
