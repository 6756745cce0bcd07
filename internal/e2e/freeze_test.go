package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// healthzBody is the part of GET /healthz (internal/health.Report) the test
// reads, declared here so a drifting contract fails it.
type healthzBody struct {
	Status       string `json:"status"`
	StuckForMs   int64  `json:"stuck_for_ms"`
	StuckAfterMs int64  `json:"stuck_after_ms"`
	Lag          *int64 `json:"lag"`
	CaughtUp     bool   `json:"caught_up"`
}

// healthzClient gives up quickly: a frozen process accepts the connection
// (the kernel does) and never answers.
var healthzClient = &http.Client{Timeout: time.Second}

// getHealthz is (status code, body); code 0 with err when nothing answered.
func getHealthz(addr string) (int, healthzBody, error) {
	var h healthzBody
	resp, err := healthzClient.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0, h, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return resp.StatusCode, h, err
}

var usageHTTPRe = regexp.MustCompile(`msg="http listening" [^\n]*?addr=(\S+)`)

// usageHTTPAddr is the HTTP address the latest consumer-usage announced in
// its log.
func usageHTTPAddr(t *testing.T, d *dashboard) string {
	t.Helper()
	var addr string
	AwaitCondition(t, "consumer-usage's HTTP address in its log", 30*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(filepath.Join(d.runDir, "logs", "consumer-usage.log"))
		if err != nil {
			return err
		}
		m := usageHTTPRe.FindAllSubmatch(b, -1)
		if len(m) == 0 {
			return fmt.Errorf("no http listening line yet")
		}
		addr = string(m[len(m)-1][1])
		return nil
	})
	return addr
}

var stoppedRe = regexp.MustCompile(`=== [0-9-]+ [0-9:.]+ (stopped|crashed|exited) pid (\d+): (.*) ===`)

// exitLines are the supervisor's exit lines in consumer-usage's log.
func exitLines(t *testing.T, d *dashboard) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.runDir, "logs", "consumer-usage.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range stoppedRe.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1]+" pid "+m[2]+": "+m[3])
	}
	return out
}

func usageProcRow(t *testing.T, s string) procRow {
	t.Helper()
	return procRows(s)["consumer-usage"]
}

// TestFreezeAndHealth drives the terminal dashboard in tmux: z freezes
// consumer-usage while the producer runs (its row says frozen, its
// /healthz stops answering 200, its lag grows past its session timeout),
// z thaws it (it recovers by itself: its commits pass what was produced
// while frozen, /healthz 200 ok, the row ok); frozen again, s stops it
// gracefully (exit 0, no SIGKILL); r starts it; frozen again, q ends the dashboard: the report says frozen,
// the frozen child was stopped with exit 0 and no process is left.
func TestFreezeAndHealth(t *testing.T) {
	d := newDashboard(t)
	tm := startTmuxDashboard(t, d, "--seed", "11", "--usage-mode", "guarded")
	screen := awaitStackUp(t, tm)
	pids := screenPIDs(screen)
	brokers := d.external
	if brokers == "" {
		m := headerBrokersRe.FindStringSubmatch(screen)
		if m == nil {
			t.Fatalf("no broker address in the header:\n%s", screen)
		}
		brokers = m[1]
	}
	addr := usageHTTPAddr(t, d)
	// Its lag must be known before the freeze: it has committed on every
	// partition (with reset latest nothing is committed before it
	// processed a message there).
	AwaitCondition(t, "consumer-usage committed on every partition", 60*time.Second, 500*time.Millisecond, func() error {
		if c := Committed(t, brokers, d.group, d.topic); len(c) < Partitions {
			return fmt.Errorf("committed %v", c)
		}
		return nil
	})
	tm.await("consumer-usage healthy, its lag known", 30*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State != "running" || r.Health != "ok" {
			return fmt.Errorf("row %+v", r)
		} else if _, ok := lagValue(r.Lag); !ok {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	if code, h, err := getHealthz(addr); code != 200 || h.Status != "ok" || h.StuckAfterMs != 10000 {
		t.Fatalf("/healthz before the freeze: %d %+v %v", code, h, err)
	}
	tm.key("3")
	tm.await("consumer-usage selected", 2*time.Second, func(s string) error {
		if r := usageProcRow(t, s); !r.Selected {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})

	// Freeze.
	frozenAt := time.Now()
	tm.key("z")
	screen = tm.await("consumer-usage frozen", 5*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State != "frozen" || r.Health != "frozen" || r.PID == 0 {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	frozenPID := usageProcRow(t, screen).PID
	if st := procState(frozenPID); st != "T" {
		t.Fatalf("consumer-usage pid %d in state %q after z, want T (stopped)", frozenPID, st)
	}
	// Its /healthz no longer answers 200: it cannot answer at all.
	var notOK time.Duration
	AwaitCondition(t, "/healthz not 200 while frozen", 10*time.Second, 100*time.Millisecond, func() error {
		code, _, err := getHealthz(addr)
		if code == 200 {
			return fmt.Errorf("answered 200")
		}
		notOK = time.Since(frozenAt)
		t.Logf("frozen: /healthz gave %d (%v) %s after z", code, err, notOK.Round(time.Millisecond))
		return nil
	})
	// Its lag grows while the producer runs, and it stays frozen past its
	// session timeout (6 s), so the group drops it: the hung-process case.
	var lagAtFreeze, lagFrozen int64 = -1, -1
	AwaitCondition(t, "lag growing while frozen, past the session timeout", 30*time.Second, 100*time.Millisecond, func() error {
		r := usageProcRow(t, tm.capture())
		n, ok := lagValue(r.Lag)
		switch {
		case r.State != "frozen":
			t.Fatalf("row %+v is no longer frozen", r)
		case !ok:
			return fmt.Errorf("lag %q", r.Lag)
		case lagAtFreeze < 0:
			lagAtFreeze = n
		}
		lagFrozen = n
		if since := time.Since(frozenAt); since < 8*time.Second || n < lagAtFreeze+20 {
			return fmt.Errorf("lag %d (was %d) after %s", n, lagAtFreeze, since.Round(time.Second))
		}
		return nil
	})
	t.Logf("frozen %s: lag %d -> %d", time.Since(frozenAt).Round(100*time.Millisecond), lagAtFreeze, lagFrozen)

	// Thaw: it recovers by itself.
	atThaw := ReadTopic(t, brokers, d.topic).HighWatermarks
	thawedAt := time.Now()
	tm.key("z")
	tm.await("consumer-usage thawed", 5*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State == "frozen" || r.PID != frozenPID {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	// It drained by itself: the broker has its commits at or past the
	// high watermarks of the thaw. The producer runs on, so the screen's
	// lag is not 0 at every poll: the fleet publishes a round of 10
	// messages each second and the commits follow each second, so a poll
	// between the two reads up to one round.
	AwaitCondition(t, "committed past the high watermarks of the thaw", 45*time.Second, 250*time.Millisecond, func() error {
		committed := Committed(t, brokers, d.group, d.topic)
		for p, hw := range atThaw {
			if committed[p] < hw {
				return fmt.Errorf("partition %d committed at %d, high watermark at the thaw %d", p, committed[p], hw)
			}
		}
		return nil
	})
	drained := time.Since(thawedAt)
	tm.await("lag within one round of the fleet and health ok after the thaw", 15*time.Second, func(s string) error {
		r := usageProcRow(t, s)
		n, ok := lagValue(r.Lag)
		if r.State != "running" || r.Health != "ok" || !ok || n > 10 || r.PID != frozenPID {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	t.Logf("thawed: lag %d -> drained in %s, same pid %d", lagFrozen, drained.Round(100*time.Millisecond), frozenPID)
	if b, err := os.ReadFile(filepath.Join(d.runDir, "logs", "consumer-usage.log")); err == nil {
		t.Logf("consumer-usage rebalances after the thaw (session timed out while frozen): revoked %d, assigned %d",
			strings.Count(string(b), `msg="partitions revoked"`), strings.Count(string(b), `msg="partitions assigned"`)-1)
	}
	AwaitCondition(t, "/healthz 200 ok after the thaw", 10*time.Second, 100*time.Millisecond, func() error {
		if code, h, err := getHealthz(addr); code != 200 || h.Status != "ok" {
			return fmt.Errorf("%d %+v %v", code, h, err)
		}
		return nil
	})
	if lines := exitLines(t, d); len(lines) != 0 {
		t.Fatalf("consumer-usage exited while frozen or thawing: %v", lines)
	}

	// Frozen again, s stops it: SIGTERM is handled (SIGCONT follows it),
	// exit 0, well before the 6 s SIGKILL.
	tm.key("z")
	tm.await("consumer-usage frozen again", 5*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State != "frozen" {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	pressed := time.Now()
	tm.key("s")
	tm.await("frozen consumer-usage stopped by s", 10*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State != "stopped" || r.Health != "down" {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	stopTook := time.Since(pressed)
	want := fmt.Sprintf("stopped pid %d: exit code 0", frozenPID)
	if lines := exitLines(t, d); len(lines) != 1 || lines[0] != want {
		t.Fatalf("consumer-usage exits %v, want [%s]", lines, want)
	}
	t.Logf("s on the frozen consumer-usage: stopped (exit 0) in %s", stopTook.Round(time.Millisecond))

	// r, then frozen once more, q: the report and the exit.
	tm.key("r")
	screen = tm.await("consumer-usage running again", 30*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State != "running" || r.PID == 0 || r.PID == frozenPID || r.Health != "ok" {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	lastPID := usageProcRow(t, screen).PID
	pids = append(pids, lastPID)
	tm.key("z")
	tm.await("the new consumer-usage frozen", 5*time.Second, func(s string) error {
		if r := usageProcRow(t, s); r.State != "frozen" || r.PID != lastPID {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	if st := procState(lastPID); st != "T" {
		t.Fatalf("consumer-usage pid %d in state %q, want T", lastPID, st)
	}
	pids = append(pids, childPIDsFromLogs(t, d.runDir)...)
	dash := tm.dashboardPID()
	quitAt := time.Now()
	tm.key("q")
	if code := tm.awaitExit(30 * time.Second); code != 0 {
		t.Errorf("dashboard exited %d after q", code)
	}
	t.Logf("q with consumer-usage frozen: the dashboard ended in %s", time.Since(quitAt).Round(time.Millisecond))
	tm.checkTerminalRestored()
	awaitNoProcesses(t, d.tag, append(pids, dash), 15*time.Second)
	want = fmt.Sprintf("stopped pid %d: exit code 0", lastPID)
	if lines := exitLines(t, d); len(lines) != 2 || lines[1] != want {
		t.Errorf("consumer-usage exits %v, want the frozen one %q at quit", lines, want)
	}

	r := d.readReport()
	if p := r.proc(t, "consumer-usage"); p.State != "frozen" || p.Health != "frozen" || p.PID != lastPID {
		t.Errorf("report consumer-usage: %+v, want state and health frozen, pid %d", p, lastPID)
	}
	for _, n := range []string{"producer", "consumer-current", "consumer-query"} {
		if p := r.proc(t, n); p.Health != "ok" {
			t.Errorf("report %s health %q, want ok", n, p.Health)
		}
	}
	if !strings.Contains(tm.capture(), "KRL-EXIT=0") {
		t.Errorf("no clean exit line on the terminal")
	}
}

// procState is the /proc state letter of pid ("" when gone).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// TestHealthzStuckOnHungStore: a consumer that is alive but cannot make
// progress answers its own GET /healthz with 503 stuck once the lag has
// been > 0 without progress for --stuck-after, and 200 ok again once it
// moves: consumer-usage with its store frozen (SIGSTOP) under a running
// producer. consumer-current, which needs no store, stays ok meanwhile.
func TestHealthzStuckOnHungStore(t *testing.T) {
	in := Stack(t)
	// A store of our own, so that freezing it touches nothing else.
	st := Start(t, in.Bin, "store", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	uri := "mongodb://" + st.Listening("mongo", 30*time.Second) + "/krl_e2e_stuck"
	const stuckAfter = 2 * time.Second
	usage := Start(t, in.Bin, "consumer", "usage", "--brokers", in.Brokers, "--mongo", uri, "--topic", in.Topic,
		"--mode", "guarded", "--reset", "earliest", "--group", "krl-e2e-stuck-"+RandomSuffix(), "--stuck-after", stuckAfter.String())
	cur := in.Role(t, "consumer", "current", "--stuck-after", stuckAfter.String())
	usageAddr := strings.TrimPrefix(usage.URL(30*time.Second), "http://")
	curAddr := strings.TrimPrefix(cur.URL(30*time.Second), "http://")
	in.Role(t, "producer", "--interval", "100ms", "--seed", "5")

	progressing := func(addr string) func() error {
		return func() error {
			code, h, err := getHealthz(addr)
			if code != 200 || h.Status != "ok" || h.Lag == nil {
				return fmt.Errorf("%d %+v %v", code, h, err)
			}
			return nil
		}
	}
	AwaitCondition(t, "consumer-usage ok with a known lag", 60*time.Second, 100*time.Millisecond, progressing(usageAddr))
	AwaitCondition(t, "consumer-current ok with a known lag", 60*time.Second, 100*time.Millisecond, progressing(curAddr))

	st.Signal(syscall.SIGSTOP)
	frozeAt := time.Now()
	frozen := true
	defer func() {
		if frozen {
			st.Signal(syscall.SIGCONT)
		}
	}()
	var stuck healthzBody
	AwaitCondition(t, "consumer-usage's /healthz 503 stuck", 10*stuckAfter, 100*time.Millisecond, func() error {
		code, h, err := getHealthz(usageAddr)
		if code != 503 || h.Status != "stuck" {
			return fmt.Errorf("%d %+v %v", code, h, err)
		}
		stuck = h
		return nil
	})
	took := time.Since(frozeAt)
	t.Logf("store frozen: consumer-usage answered 503 stuck %s later (stuck_for %d ms, lag %s)",
		took.Round(10*time.Millisecond), stuck.StuckForMs, fmtLag(stuck.Lag))
	// The clock starts when work is in hand without progress, which can be
	// a message received just before the freeze: took may be a little
	// under the bound, stuck_for never.
	if stuck.StuckForMs < stuckAfter.Milliseconds() || stuck.Lag == nil || *stuck.Lag <= 0 || took > stuckAfter+3*time.Second {
		t.Errorf("stuck answer %+v %s after the freeze: want stuck_for >= %v, lag > 0, within %v", stuck, took, stuckAfter, stuckAfter+3*time.Second)
	}
	if code, h, err := getHealthz(curAddr); code != 200 || h.Status != "ok" {
		t.Errorf("consumer-current, which needs no store, says %d %+v %v", code, h, err)
	}

	st.Signal(syscall.SIGCONT)
	frozen = false
	thawAt := time.Now()
	AwaitCondition(t, "consumer-usage ok again", 30*time.Second, 100*time.Millisecond, progressing(usageAddr))
	t.Logf("store thawed: consumer-usage answered 200 ok %s later", time.Since(thawAt).Round(10*time.Millisecond))
}
