package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The terminal dashboard in a real terminal: tmux at 120x36, keys sent as a
// user types them, the screen read back with capture-pane.

const (
	termWidth  = 120
	termHeight = 36
)

// tmuxTerm is a private tmux server (its own socket) running the dashboard
// through a wrapper shell that records the terminal settings before and
// after (each file appears whole: written aside, then renamed), the
// dashboard's pid and its exit code, then keeps the pane open.
type tmuxTerm struct {
	t    *testing.T
	sock string
	dir  string
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func startTmuxDashboard(t *testing.T, d *dashboard, extra ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required for the terminal end-to-end tests and is not installed (.ci/run installs it): %v", err)
	}
	tm := &tmuxTerm{t: t, sock: "krl-e2e-" + RandomSuffix(), dir: t.TempDir()}
	conf := filepath.Join(tm.dir, "tmux.conf")
	// No status line: the pane is the whole 120x36 window.
	if err := os.WriteFile(conf, []byte("set -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"env", tagEnv + "=" + d.tag, Binary(t)}
	cmd = append(cmd, d.args(extra...)...)
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = shellQuote(a)
	}
	wrapper := filepath.Join(tm.dir, "run.sh")
	script := fmt.Sprintf(`dir=%s
stty -g > "$dir/stty.before.tmp" && mv "$dir/stty.before.tmp" "$dir/stty.before"
sh -c 'echo $$ > "$0/pid"; exec "$@"' "$dir" %s
echo "KRL-EXIT=$?"
stty -g > "$dir/stty.after.tmp" && mv "$dir/stty.after.tmp" "$dir/stty.after"
exec sleep 600
`, shellQuote(tm.dir), strings.Join(quoted, " "))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.tmux("-f", conf, "new-session", "-d", "-s", "krl", "-x", strconv.Itoa(termWidth), "-y", strconv.Itoa(termHeight), "/bin/sh "+wrapper)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- screen at the end:\n%s", tm.capture())
		}
		if pid := tm.pidNow(); pid > 0 && alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = exec.Command("tmux", "-L", tm.sock, "kill-server").Run()
		// A SIGKILLed dashboard's children die by its watchdog: the run's
		// directories are removed after them (a JVM still writing its data
		// made the removal fail), and one that lives on fails the test.
		awaitNoProcesses(t, d.tag, nil, 15*time.Second)
	})
	if size := tm.display("#{pane_width}x#{pane_height}"); size != fmt.Sprintf("%dx%d", termWidth, termHeight) {
		t.Fatalf("tmux pane is %s, want %dx%d", size, termWidth, termHeight)
	}
	return tm
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the screen as text, one line per row.
func (tm *tmuxTerm) capture() string {
	out, err := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-t", "krl").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane failed: %v: %s)", err, out)
	}
	return string(out)
}

func (tm *tmuxTerm) display(format string) string {
	return strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "krl", format))
}

// key sends one key, as typed.
func (tm *tmuxTerm) key(k string) { tm.tmux("send-keys", "-t", "krl", k) }

// await polls the screen until check accepts it, and returns that screen.
func (tm *tmuxTerm) await(what string, timeout time.Duration, check func(screen string) error) string {
	tm.t.Helper()
	var screen string
	AwaitCondition(tm.t, what, timeout, 20*time.Millisecond, func() error {
		screen = tm.capture()
		return check(screen)
	})
	return screen
}

func (tm *tmuxTerm) pidNow() int {
	b, err := os.ReadFile(filepath.Join(tm.dir, "pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// dashboardPID is the dashboard's own pid (the wrapper execs it).
func (tm *tmuxTerm) dashboardPID() int {
	tm.t.Helper()
	var pid int
	AwaitCondition(tm.t, "the dashboard's pid", 10*time.Second, 20*time.Millisecond, func() error {
		if pid = tm.pidNow(); pid == 0 {
			return fmt.Errorf("no pid file yet")
		}
		return nil
	})
	return pid
}

var exitLine = regexp.MustCompile(`KRL-EXIT=(\d+)`)

// awaitExit waits until the dashboard ended and returns its exit code.
func (tm *tmuxTerm) awaitExit(timeout time.Duration) int {
	tm.t.Helper()
	screen := tm.await("the dashboard ended", timeout, func(s string) error {
		if !exitLine.MatchString(s) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	code, _ := strconv.Atoi(exitLine.FindStringSubmatch(screen)[1])
	return code
}

// checkTerminalRestored: after the dashboard the terminal is as before it:
// same stty settings (no raw mode left), main screen, cursor shown, no
// mouse reporting.
func (tm *tmuxTerm) checkTerminalRestored() {
	tm.t.Helper()
	var before, after []byte
	AwaitCondition(tm.t, "stty settings written by the wrapper", 5*time.Second, 20*time.Millisecond, func() error {
		var err error
		if before, err = os.ReadFile(filepath.Join(tm.dir, "stty.before")); err != nil {
			return err
		}
		after, err = os.ReadFile(filepath.Join(tm.dir, "stty.after"))
		return err
	})
	if strings.TrimSpace(string(before)) != strings.TrimSpace(string(after)) {
		tm.t.Errorf("terminal settings not restored: stty -g before %q, after %q", before, after)
	}
	if got := tm.display("#{alternate_on} #{cursor_flag} #{mouse_any_flag}"); got != "0 1 0" {
		tm.t.Errorf("terminal not restored: alternate screen, cursor visible, mouse = %q, want \"0 1 0\"", got)
	}
	if screen := tm.capture(); strings.Contains(screen, "Kafka Recovery Lab") || strings.Contains(screen, "╭") {
		tm.t.Errorf("the dashboard is still drawn on the main screen after it ended:\n%s", screen)
	}
}

// A process row of the dashboard: "▸ 3  consumer-usage  checkpoint +
// latest  running  13992  5s  1  0  30 ··███".
type procRow struct {
	Selected bool
	State    string
	PID      int // 0 when not running ("—")
	Starts   int
	Crashes  int
	Lag      string
	Health   string // ok, alive, …, down, frozen, stuck 12s
	// LagStatus: the word beside the lag (OK, WARN, STALL, STOP; "" before
	// it is judged).
	LagStatus string
}

var procRowRe = regexp.MustCompile(`(▸| ) (\d) +(\S+)\s+(.+?)\s+(crashed \([^)]*\)|crashed|crashing…|running \(paused\)|running|replaying \d+%|starting|stopping|stopped|restarting|frozen|retrying(?: \S+)?|backpressure \S+|failed(?:: \S+(?: \S+)?)?)\s+(ok|alive|…|down|frozen|stuck \d+[smh])\s+(\d+|—)\s+(\S+)\s+(\d+)\s+(\d+)(?:\s+(— down|…|no commit|≥[\d,]+|[\d,]+ sent|paused, [\d,]+ sent|no Kafka lag|[\d,]+)(?: stale)?(?: (OK|WARN|STALL|STOP))?)?`)

// procRows parses the process table of a screen.
func procRows(screen string) map[string]procRow {
	rows := map[string]procRow{}
	for _, line := range strings.Split(screen, "\n") {
		m := procRowRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, seen := rows[m[3]]; seen {
			continue
		}
		r := procRow{Selected: m[1] == "▸", State: m[5], Health: m[6], Lag: m[11], LagStatus: m[12]}
		r.PID, _ = strconv.Atoi(m[7])
		r.Starts, _ = strconv.Atoi(m[9])
		r.Crashes, _ = strconv.Atoi(m[10])
		rows[m[3]] = r
	}
	return rows
}

// lagValue is a lag shown as a plain number of messages.
func lagValue(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n, err == nil
}

var sensorRowRe = regexp.MustCompile(`│sensor-(\d+) +\d+\.\d+ +\d+\.\d+ +(?:same|behind|WRONG|stale)? *│`)

// sensorRows counts the distinct sensors with a state row on the screen.
func sensorRows(screen string) int {
	seen := map[string]bool{}
	for _, m := range sensorRowRe.FindAllStringSubmatch(screen, -1) {
		seen[m[1]] = true
	}
	return len(seen)
}

var headerBrokersRe = regexp.MustCompile(`brokers (\S+)`)

// awaitStackUp waits for the sensor rows and every process running.
func awaitStackUp(t *testing.T, tm *tmuxTerm) string {
	t.Helper()
	return tm.await("all 10 sensor rows and every process running", 90*time.Second, func(s string) error {
		if n := sensorRows(s); n < 10 {
			return fmt.Errorf("%d sensor rows", n)
		}
		rows := procRows(s)
		for _, n := range []string{"producer", "consumer-current", "consumer-usage", "consumer-query"} {
			if r, ok := rows[n]; !ok || r.State != "running" || r.PID == 0 {
				return fmt.Errorf("%s row %+v (found %v)", n, r, ok)
			}
		}
		return nil
	})
}

// screenPIDs are the pids shown in the process table.
func screenPIDs(screen string) []int {
	var pids []int
	for _, r := range procRows(screen) {
		if r.PID > 0 {
			pids = append(pids, r.PID)
		}
	}
	return pids
}

// TestDashboardTmux runs the real dashboard in tmux at 120x36 and drives it
// with keys: 3 selects consumer-usage, x crashes it (the row says crashed
// within a second of the key press, and its lag keeps growing while it is
// dead), r restarts it (running again), p pauses the producer so the lag
// can settle (it must then read exactly 0, which the broker confirms), q
// quits: the terminal is restored and no process of the run is left.
func TestDashboardTmux(t *testing.T) {
	d := newDashboard(t)
	tm := startTmuxDashboard(t, d, "--seed", "7", "--interval", "200ms")
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
	// Its lag must be known before the crash (it has committed once), so
	// that its growth while dead can be seen.
	screen = tm.await("consumer-usage's lag known", 30*time.Second, func(s string) error {
		if r := procRows(s)["consumer-usage"]; r.State != "running" {
			return fmt.Errorf("row %+v", r)
		} else if _, ok := lagValue(r.Lag); !ok {
			return fmt.Errorf("lag %q", r.Lag)
		}
		return nil
	})
	before := procRows(screen)["consumer-usage"]

	tm.key("3")
	tm.await("consumer-usage selected", time.Second, func(s string) error {
		if r := procRows(s)["consumer-usage"]; !r.Selected {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})

	pressed := time.Now()
	tm.key("x")
	screen = tm.await("consumer-usage crashed", 5*time.Second, func(s string) error {
		if r := procRows(s)["consumer-usage"]; !strings.HasPrefix(r.State, "crashed") {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	took := time.Since(pressed)
	t.Logf("x: consumer-usage shown crashed %s after the key press", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("consumer-usage shown crashed %s after x, want within 1s", took)
	}
	crashed := procRows(screen)["consumer-usage"]
	if crashed.State != "crashed (SIGKILL)" || crashed.PID != 0 || crashed.Crashes != before.Crashes+1 {
		t.Errorf("after x the row is %+v, want crashed (SIGKILL), no pid, crashes %d", crashed, before.Crashes+1)
	}
	if alive(before.PID) {
		t.Errorf("consumer-usage pid %d is still alive after the crash", before.PID)
	}

	// While it is dead the producer goes on: the lag must grow on screen.
	var first int64 = -1
	tm.await("consumer-usage's lag growing while it is dead", 10*time.Second, func(s string) error {
		r := procRows(s)["consumer-usage"]
		if !strings.HasPrefix(r.State, "crashed") {
			return fmt.Errorf("row %+v is no longer crashed", r)
		}
		n, ok := lagValue(r.Lag)
		switch {
		case !ok:
			return fmt.Errorf("lag %q is not a number", r.Lag)
		case first < 0:
			first = n
			return fmt.Errorf("lag %d, waiting for more", n)
		case n <= first:
			return fmt.Errorf("lag %d, was %d", n, first)
		}
		return nil
	})

	tm.key("r")
	screen = tm.await("consumer-usage running again", 30*time.Second, func(s string) error {
		r := procRows(s)["consumer-usage"]
		if r.State != "running" || r.PID == 0 || r.PID == before.PID {
			return fmt.Errorf("row %+v", r)
		}
		return nil
	})
	if r := procRows(screen)["consumer-usage"]; r.Starts != before.Starts+1 || r.Crashes != before.Crashes+1 {
		t.Errorf("after r the row is %+v, want starts %d crashes %d", r, before.Starts+1, before.Crashes+1)
	}
	pids = append(pids, screenPIDs(screen)...)

	// While the producer publishes, a committed lag of exactly 0 is a
	// matter of luck (commits are periodic); once it is paused the lag
	// must settle to 0 and stay there.
	tm.key("p")
	tm.await("producer paused and consumer-usage's lag 0", 30*time.Second, func(s string) error {
		rows := procRows(s)
		if r := rows["producer"]; r.State != "running (paused)" {
			return fmt.Errorf("producer row %+v", r)
		}
		for _, n := range []string{"consumer-usage", "consumer-current"} {
			if r := rows[n]; r.State != "running" || r.Lag != "0" {
				return fmt.Errorf("%s row %+v", n, r)
			}
		}
		return nil
	})
	// The 0 on screen is the broker's view.
	tp := ReadTopic(t, brokers, d.topic)
	committed := Committed(t, brokers, d.group, d.topic)
	for p, hw := range tp.HighWatermarks {
		if committed[p] != hw {
			t.Errorf("screen shows lag 0, but partition %d is committed at %d with high watermark %d", p, committed[p], hw)
		}
	}
	if tp.Count() == 0 {
		t.Fatalf("the topic is empty")
	}

	pids = append(pids, childPIDsFromLogs(t, d.runDir)...)
	dash := tm.dashboardPID()
	tm.key("q")
	if code := tm.awaitExit(30 * time.Second); code != 0 {
		t.Errorf("dashboard exited %d after q", code)
	}
	tm.checkTerminalRestored()
	awaitNoProcesses(t, d.tag, append(pids, dash), 15*time.Second)
}

// TestDashboardSignals: SIGTERM and SIGHUP to the terminal dashboard end it
// cleanly (exit 0), restore the terminal, and leave no process behind.
func TestDashboardSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			d := newDashboard(t)
			tm := startTmuxDashboard(t, d, "--interval", "200ms")
			screen := awaitStackUp(t, tm)
			pids := append(screenPIDs(screen), childPIDsFromLogs(t, d.runDir)...)
			dash := tm.dashboardPID()
			if len(taggedProcs(d.tag)) < 6 {
				t.Fatalf("only %d tagged processes while running: %v", len(taggedProcs(d.tag)), taggedProcs(d.tag))
			}
			start := time.Now()
			if err := syscall.Kill(dash, sig); err != nil {
				t.Fatal(err)
			}
			if code := tm.awaitExit(30 * time.Second); code != 0 {
				t.Errorf("dashboard exited %d after %s, want 0", code, sig)
			}
			t.Logf("%s: dashboard ended in %s", sig, time.Since(start).Round(time.Millisecond))
			tm.checkTerminalRestored()
			awaitNoProcesses(t, d.tag, append(pids, dash), 15*time.Second)
		})
	}
}

// TestDashboardKilled: the dashboard killed with SIGKILL (no cleanup code
// runs at all) leaves no child: the parent-death signal and the watchdog
// take every process of the run down.
func TestDashboardKilled(t *testing.T) {
	d := newDashboard(t)
	dash := d.startHeadless("", "--interval", "200ms")
	d.awaitLog("the stack running", regexp.MustCompile(`consumer-current caught up`), 90*time.Second)
	var pids []int
	want := 6 // broker, store, producer, three consumers
	if d.external != "" {
		want = 5
	}
	AwaitCondition(t, "every child started", 60*time.Second, 50*time.Millisecond, func() error {
		pids = childPIDsFromLogs(t, d.runDir)
		if len(pids) < want {
			return fmt.Errorf("%d children started", len(pids))
		}
		for _, pid := range pids {
			if !alive(pid) {
				return fmt.Errorf("child %d not alive", pid)
			}
		}
		return nil
	})
	tagged := taggedProcs(d.tag)
	if len(tagged) < want+1 {
		t.Fatalf("tagged processes %v, want the dashboard and its %d children at least", tagged, want)
	}
	start := time.Now()
	dash.Kill()
	awaitNoProcesses(t, d.tag, append(pids, sortedKeys(tagged)...), 10*time.Second)
	t.Logf("SIGKILL: %d processes of the run gone %s after the dashboard died", len(tagged), time.Since(start).Round(time.Millisecond))
}
