package e2e

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// The headless dashboard driven by --script, checked against what the run
// left in the topic and the store, read independently after it ended.

// TestHeadlessCrashEachConsumerGuarded crashes (SIGKILL) and restarts each
// consumer while the producer publishes, consumer-usage in guarded mode;
// then pauses the producer, waits caught up and quits. The report must
// match the topic exactly: every sensor's current is its last valid
// message, usage equals the expected usage to the cent, drift is 0, the
// process counts are what the script did and both consumers' lag is 0.
func TestHeadlessCrashEachConsumerGuarded(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
wait 1s
crash consumer-current
restart consumer-current
wait-caught-up 60s
crash consumer-usage
wait 500ms            # the producer goes on while it is dead
restart consumer-usage
wait-caught-up 60s
crash consumer-query
wait 500ms
start consumer-query
wait 1s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "guarded", "--interval", "50ms", "--seed", "11")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	checkEachConsumerCrashedOnce(t, d, r, "guarded")
	for _, name := range []string{"consumer-current", "consumer-usage", "consumer-query"} {
		if !strings.Contains(d.stderr(), name+" crashed on request: killed by SIGKILL") {
			t.Errorf("the event log has no crash of %s", name)
		}
	}
	rt := d.readRunTruth()
	if rt.Truth.Invalid != 0 || len(rt.Truth.Sensors) != 10 {
		t.Fatalf("topic: %d sensors, %d invalid records", len(rt.Truth.Sensors), rt.Truth.Invalid)
	}
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
	t.Logf("%d records; usage checked exactly for %d sensors", rt.Topic.Count(), len(rt.Expected))
}

// TestHeadlessCrashEachConsumerNaive is the same in the article's naive
// mode. consumer-current and consumer-query are crashed while the producer
// publishes (neither writes usage); consumer-usage is crashed while
// nothing is in flight (producer paused, everything processed and
// committed), then runs on with new data. Naive over-counts only what was
// processed and not committed, or written half: here nothing was, so even
// naive must end with a drift of exactly 0.
func TestHeadlessCrashEachConsumerNaive(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
wait 1s
crash consumer-current
restart consumer-current
crash consumer-query
restart consumer-query
wait 1s
pause producer
wait-caught-up 60s     # nothing in flight now
crash consumer-usage
restart consumer-usage
resume producer
wait 2s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "naive", "--interval", "50ms", "--seed", "12")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	checkEachConsumerCrashedOnce(t, d, r, "naive")
	rt := d.readRunTruth()
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
}

func checkReportHeader(t *testing.T, d *dashboard, r dashReport) {
	t.Helper()
	if d.external != "" && r.Brokers != d.external {
		t.Errorf("report brokers %q, the dashboard was given %q", r.Brokers, d.external)
	}
	if d.external == "" && !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(r.Brokers) {
		t.Errorf("report brokers %q is not the embedded broker's address", r.Brokers)
	}
	if !strings.HasPrefix(r.Mongo, "mongodb://127.0.0.1:") {
		t.Errorf("report mongo %q is not the embedded store's URI", r.Mongo)
	}
}

// TestResetEarliest restarts consumer-usage with reset earliest (a fresh
// group: the whole topic is replayed) a few seconds into the run.
//
// Naive: the replay records the sensor's history again, from its first
// message in the topic up to the checkpoint it had (the seed's rule: the
// first replayed message is older than the checkpoint, gives a negative
// delta, records nothing and overwrites the checkpoint; every later one
// records again). So the drift of every sensor is positive within seconds,
// and it is exactly the movement between the sensor's first message and one
// of its messages: a replayed prefix of its history, no more, no less.
//
// Guarded: the replayed records are at or before the checkpoints and are
// skipped: the drift stays exactly 0.
func TestResetEarliest(t *testing.T) {
	script := `
wait-caught-up 60s
wait 2s
reset consumer-usage earliest
wait 3s
pause producer
wait-caught-up 60s
quit
`
	for _, mode := range []string{"naive", "guarded"} {
		t.Run(mode, func(t *testing.T) {
			d := newDashboard(t)
			d.startHeadless(script, "--usage-mode", mode, "--interval", "50ms", "--seed", "13")
			if code := d.waitExit(3 * time.Minute); code != 0 {
				t.Fatalf("dashboard exited %d", code)
			}
			r := d.readReport()
			u := r.proc(t, "consumer-usage")
			if u.Mode != mode || u.Reset != "earliest" || u.Starts != 2 || u.Crashes != 0 || u.State != "running" {
				t.Errorf("consumer-usage %+v, want %s, earliest, running, 2 starts, no crash", u, mode)
			}
			if !regexp.MustCompile(`msg=starting .*reset=earliest group=demo-usage-earliest-`).MatchString(readLog(t, d, "consumer-usage")) {
				t.Errorf("consumer-usage did not restart with earliest and a fresh group")
			}
			rt := d.readRunTruth()
			checkCurrentIsTruth(t, r, rt.Truth)
			if mode == "guarded" {
				checkUsageExact(t, r, rt)
				return
			}
			checkEarliestOverCount(t, r, rt)
		})
	}
}

// checkEarliestOverCount: naive with earliest over-counts every sensor by a
// replayed prefix of its history, and the report shows that very drift.
func checkEarliestOverCount(t *testing.T, r dashReport, rt runTruth) {
	t.Helper()
	first := map[string]telemetry.Message{}
	var odos = map[string][][2]int64{}
	for _, rec := range rt.Topic.Records {
		m, err := telemetry.Decode(rec.Key, rec.Value)
		if err != nil {
			continue
		}
		if _, ok := first[m.SensorID]; !ok {
			first[m.SensorID] = m
		}
		odos[m.SensorID] = append(odos[m.SensorID], [2]int64{cents(m.Odometry.HoursTot), cents(m.Odometry.KmTot)})
	}
	var total [2]int64
	for _, s := range r.Sensors {
		stored, want := rt.Stored[s.SensorID], rt.Expected[s.SensorID]
		dh, dk := stored.HoursCents-want.HoursCents, stored.KmCents-want.KmCents
		total[0] += dh
		total[1] += dk
		h, k, ok := reportDrift(s)
		if !ok || h != dh || k != dk {
			t.Errorf("%s: report drift %+v, independently %d/%d cents (store %+v, topic %+v)", s.SensorID, s.Drift, dh, dk, stored, want)
		}
		if dh <= 0 && dk <= 0 || dh < 0 || dk < 0 {
			t.Errorf("%s: drift %d h-cents %d km-cents after a naive replay from earliest, want an over-count", s.SensorID, dh, dk)
			continue
		}
		f := first[s.SensorID]
		target := [2]int64{cents(f.Odometry.HoursTot) + dh, cents(f.Odometry.KmTot) + dk}
		found := false
		for _, o := range odos[s.SensorID] {
			found = found || o == target
		}
		if !found {
			t.Errorf("%s: drift %d/%d cents is not the movement from its first message to any of its messages", s.SensorID, dh, dk)
		}
	}
	n := checkDriftCauses(t, r, rt)
	if n == 0 {
		t.Errorf("an over-count with no cause named")
	}
	t.Logf("naive + earliest: over-count %.2f h, %.2f km over %d sensors, named by %d messages %+v",
		float64(total[0])/100, float64(total[1])/100, len(r.Sensors), n, r.DriftCausesByKind)
}

func cents(f float64) int64 { return int64(math.Round(f * 100)) }

func readLog(t *testing.T, d *dashboard, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.runDir, "logs", name+".log"))
	if err != nil {
		t.Fatalf("log of %s: %v", name, err)
	}
	return string(b)
}

// checkEachConsumerCrashedOnce checks the report of a run that crashed and
// restarted each consumer once, with consumer-usage in mode and reset latest.
func checkEachConsumerCrashedOnce(t *testing.T, d *dashboard, r dashReport, mode string) {
	t.Helper()
	checkReportHeader(t, d, r)
	checkProcesses(t, r, d, map[string][2]int{
		"consumer-current": {2, 1}, "consumer-usage": {2, 1}, "consumer-query": {2, 1},
	})
	if u := r.proc(t, "consumer-usage"); u.Mode != mode || u.Reset != "latest" {
		t.Errorf("consumer-usage mode %q reset %q, want %s latest", u.Mode, u.Reset, mode)
	}
}

// TestResetLabAfterOverCount: a naive replay from earliest over-counts every
// sensor; reset-lab starts a new baseline in which usage counts from 0, so
// the report is exact again, checked against the topic and the store.
func TestResetLabAfterOverCount(t *testing.T) {
	// The second wait-caught-up has consumer-usage process what the
	// producer published in the 2 s before it: the replay from earliest
	// has something to count again (a first wait returns at once on an
	// empty topic, even before consumer-usage holds its partitions).
	script := `
wait-caught-up 60s
wait 2s
wait-caught-up 60s
reset consumer-usage earliest
wait 4s
pause producer
wait-caught-up 60s
reset-lab
resume producer
wait 10s
pause producer
wait-caught-up 60s
quit
`
	d := newDashboard(t)
	d.startHeadless(script, "--usage-mode", "naive", "--interval", "50ms", "--seed", "17")
	if code := d.waitExit(4 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	// What the reset wiped out, as the usage panel showed it: an over-count.
	m := regexp.MustCompile(`reset lab: .*\([\d,]+ records?, drift ([+-]\d+\.\d\d) h / ([+-]\d+\.\d\d) km: over-counted\)`).
		FindStringSubmatch(d.stderr())
	if m == nil {
		t.Fatalf("no over-count noted at reset-lab; events:\n%s", d.stderr())
	}
	if h, _ := strconv.ParseFloat(m[1], 64); h <= 0 {
		t.Errorf("drift before reset-lab %s h, want an over-count", m[1])
	}
	if !strings.Contains(d.stderr(), "new baseline #1: consumer-usage reads on from the end of the topic") {
		t.Errorf("no new baseline in the events")
	}
	r := d.readReport()
	u := r.proc(t, "consumer-usage")
	if u.Mode != "naive" || u.Reset != "latest" || u.State != "running" {
		t.Errorf("consumer-usage %+v, want naive, latest, running", u)
	}
	if !regexp.MustCompile(`msg=starting .*reset=latest group=\S+-baseline-1`).MatchString(readLog(t, d, "consumer-usage")) {
		t.Errorf("consumer-usage did not start in the baseline's own group")
	}
	rt := d.readRunTruth()
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
}

// TestHistoryKeepsUsageExact: the history action grows the topic until a
// replay of consumer-current takes the time asked for, and consumer-usage
// (guarded) starts after the history on a new baseline: its usage, read back
// from the store, is exactly what the topic yields, and the dashboard's
// drift is 0.
func TestHistoryKeepsUsageExact(t *testing.T) {
	script := `
wait-caught-up 60s
history 1s
wait-caught-up 90s
wait 3s
pause producer
wait-caught-up 60s
quit
`
	d := newDashboard(t)
	d.startHeadless(script, "--usage-mode", "guarded", "--interval", "200ms", "--seed", "23")
	if code := d.waitExit(4 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	m := regexp.MustCompile(`history: a replay of ([\d,]+) messages takes (\d+\.\d) s`).FindStringSubmatch(d.stderr())
	if m == nil {
		t.Fatalf("no measured replay noted; events:\n%s", d.stderr())
	}
	if s, _ := strconv.ParseFloat(m[2], 64); s < 1 {
		t.Errorf("the last measured replay took %s s, want at least 1 s", m[2])
	}
	if !strings.Contains(d.stderr(), "new baseline #1: consumer-usage reads on from the end of the topic") {
		t.Errorf("consumer-usage did not start after the history on a new baseline")
	}
	r := d.readReport()
	var size int64
	for _, p := range r.Partitions {
		if p.HighWatermark != nil {
			size += *p.HighWatermark
		}
	}
	if n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64); n < 100_000 || size < n {
		t.Errorf("a replay of %s messages, the topic holds %d: want at least 100,000 and the whole topic", m[1], size)
	}
	rt := d.readRunTruth()
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
}
