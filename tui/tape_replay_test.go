package main

import (
	"bufio"
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

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/e2e"
)

// tapeCommand is one command of a VHS tape, as far as replaying its keys
// needs: Type, Enter, Sleep, Wait and the named keys; settings, Output,
// Require, Hide and Show only matter for rendering.
type tapeCommand struct {
	Line int
	Kind string         // "Type", "Enter", "Sleep", "Wait", "Key", "Set", "Other"
	Text string         // Type's text; Key's key name for tmux; Set's setting
	Arg  string         // Set's value
	Rx   *regexp.Regexp // Wait's pattern (nil: the default prompt pattern)
	// Screen: Wait+Screen (the whole tapeScreen); otherwise the cursor's line.
	Screen  bool
	Timeout time.Duration // Wait@…; 0 = the tape's WaitTimeout
}

var (
	tapeTypeRx = regexp.MustCompile(`^Type(?:@\S+)?\s+"((?:[^"\\]|\\.)*)"$`)
	tapeWaitRx = regexp.MustCompile(`^Wait(\+Screen|\+Line)?(?:@(\S+))?(?:\s+/(.*)/)?$`)
	// tapeKeys maps VHS key commands to tmux key names.
	tapeKeys = map[string]string{"Escape": "Escape", "Up": "Up", "Down": "Down", "Left": "Left",
		"Right": "Right", "Tab": "Tab", "Space": "Space", "Backspace": "BSpace", "Ctrl+C": "C-c"}
)

// parseTape reads the commands of a tape. A command it does not know is an
// error, so a tape edited beyond what the replay understands fails loudly.
func parseTape(path string) ([]tapeCommand, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cmds []tapeCommand
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		c := tapeCommand{Line: n}
		switch {
		case word == "Type" || strings.HasPrefix(word, "Type@"):
			m := tapeTypeRx.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: cannot read %q", n, line)
			}
			text, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			c.Kind, c.Text = "Type", text
		case word == "Enter":
			c.Kind = "Enter"
		case word == "Sleep":
			d, err := tapeDuration(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			c.Kind, c.Timeout = "Sleep", d
		case strings.HasPrefix(word, "Wait"):
			m := tapeWaitRx.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: cannot read %q", n, line)
			}
			c.Kind, c.Screen = "Wait", m[1] == "+Screen"
			if m[2] != "" {
				if c.Timeout, err = tapeDuration(m[2]); err != nil {
					return nil, fmt.Errorf("line %d: %v", n, err)
				}
			}
			if m[3] != "" {
				if c.Rx, err = regexp.Compile(m[3]); err != nil {
					return nil, fmt.Errorf("line %d: %v", n, err)
				}
			}
		case tapeKeys[word] != "":
			c.Kind, c.Text = "Key", tapeKeys[word]
		case word == "Set":
			c.Kind = "Set"
			c.Text, c.Arg, _ = strings.Cut(rest, " ")
			c.Arg = strings.Trim(strings.TrimSpace(c.Arg), `"`)
		case word == "Output" || word == "Require" || word == "Hide" || word == "Show" || word == "Screenshot":
			c.Kind = "Other"
		default:
			return nil, fmt.Errorf("line %d: the replay does not know %q", n, word)
		}
		cmds = append(cmds, c)
	}
	return cmds, sc.Err()
}

// tapeDuration reads VHS times: "500ms", "6s", "1m", or a bare number of
// seconds.
func tapeDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

// TestDemoTapeReplay plays demo.tape's keys against the real dashboard in a
// 120x36 tmux terminal, the size the tape records. The tape's own Wait
// commands are honoured; its Sleeps are replaced by awaiting what each
// dashboard key must lead to on tapeScreen: x marks the selected process
// crashed (SIGKILL) within a second or two, r brings it back to running, c
// makes consumer-usage kill itself at its crash point, m switches its mode,
// R starts a new baseline with the usage exact, p pauses the producer, and q ends the dashboard leaving none of its
// processes alive.
//
// The tape demonstrates the embedded stack, so the replay runs without
// KAFKA_BROKER / MONGO_URI whatever the environment says. KRL_TAPE_REALTIME=1
// keeps the tape's Sleeps too (about a minute, as recorded).
func TestDemoTapeReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole stack in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is needed for this test (install it: apt-get install tmux): %v", err)
	}
	root, err := e2e.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := parseTape(filepath.Join(root, "demo.tape"))
	if err != nil {
		t.Fatalf("demo.tape: %v", err)
	}
	width, height, waitTimeout := 120, 36, 15*time.Second
	for _, c := range cmds {
		switch {
		case c.Kind == "Set" && c.Text == "WaitTimeout":
			if waitTimeout, err = tapeDuration(c.Arg); err != nil {
				t.Fatalf("line %d: WaitTimeout: %v", c.Line, err)
			}
		case c.Kind == "Set" && c.Text == "Shell" && c.Arg != "bash":
			t.Fatalf("line %d: the replay runs bash, the tape sets %q", c.Line, c.Arg)
		}
	}

	realTime := os.Getenv("KRL_TAPE_REALTIME") != ""
	term := newTapeTerm(t, root, width, height)
	dash := &tapeDashboard{t: t, term: term, selected: board.Producer}
	var typed string // the shell command being typed, until Enter
	for _, c := range cmds {
		switch c.Kind {
		case "Type":
			if dash.running {
				for _, k := range c.Text {
					dash.press(string(k), c.Line)
				}
				continue
			}
			term.sendLiteral(c.Text)
			typed += c.Text
		case "Enter":
			term.sendKey("Enter")
			if !dash.running && strings.HasPrefix(strings.TrimSpace(typed), "go run ./tui") && !strings.Contains(typed, " help") {
				dash.started(c.Line)
			}
			typed = ""
		case "Key":
			if dash.running && c.Text != "Escape" {
				t.Fatalf("line %d: the replay checks no effect for key %s in the dashboard", c.Line, c.Text)
			}
			term.sendKey(c.Text)
		case "Wait":
			timeout := c.Timeout
			if timeout == 0 {
				timeout = waitTimeout
			}
			what, ok := tapeWaitPredicate(c)
			term.await(fmt.Sprintf("line %d: %s", c.Line, what), timeout, ok)
		case "Sleep":
			// Replaced by the awaits after each key, unless asked for the
			// tape's own timing (to watch it: tmux -L <socket> attach).
			if realTime {
				time.Sleep(c.Timeout)
			}
		}
	}
	if dash.running {
		t.Fatal("the tape ends with the dashboard still running: it must end with q")
	}
	if !dash.quit {
		t.Fatal("the tape never started the dashboard (go run ./tui ...)")
	}
}

// tapeWaitPredicate is a tape Wait as a tapeScreen condition: +Screen matches the
// whole tapeScreen, otherwise the line the cursor is on (the default pattern
// is VHS's prompt, "> " at the end of the line).
func tapeWaitPredicate(c tapeCommand) (string, func(tapeScreen) bool) {
	rx := c.Rx
	if rx == nil {
		rx = regexp.MustCompile(`>$`)
	}
	if c.Screen {
		return "Wait+Screen /" + rx.String() + "/", func(s tapeScreen) bool { return rx.MatchString(s.text()) }
	}
	return "Wait /" + rx.String() + "/", func(s tapeScreen) bool { return rx.MatchString(strings.TrimRight(s.cursorLine(), " ")) }
}

// tapeDashboard checks what each key of the contract does to the tapeScreen.
type tapeDashboard struct {
	t        *testing.T
	term     *tapeTerm
	running  bool
	quit     bool
	selected string
	mode     string
	// seen: every process the dashboard started (pid → command line), so
	// the end can prove none is left.
	seen map[int]string
}

func (d *tapeDashboard) started(line int) {
	d.running, d.mode = true, "naive"
	d.seen = map[int]string{}
	d.term.await(fmt.Sprintf("line %d: the dashboard shows every sensor row", line), 90*time.Second, func(s tapeScreen) bool {
		d.track()
		for i := 1; i <= 10; i++ {
			if !strings.Contains(s.text(), fmt.Sprintf("sensor-%02d", i)) {
				return false
			}
		}
		return strings.Contains(s.text(), "Processes")
	})
}

// press sends one dashboard key and awaits its effect.
func (d *tapeDashboard) press(k string, line int) {
	t, term := d.t, d.term
	d.track()
	before := tapeRowPID(term.capture().row(board.Usage))
	term.sendLiteral(k)
	at := fmt.Sprintf("line %d: key %q", line, k)
	start := time.Now()
	defer func() {
		if !t.Failed() {
			t.Logf("%s on %s: effect seen after %s", at, d.selected, time.Since(start).Round(10*time.Millisecond))
		}
	}()
	row := func(name string) func(tapeScreen) string { return func(s tapeScreen) string { return s.row(name) } }
	switch {
	case len(k) == 1 && k[0] >= '1' && k[0] <= '6':
		d.selected = board.Canonical[k[0]-'1']
		name := d.selected
		term.await(at+": "+name+" selected", 5*time.Second, func(s tapeScreen) bool { return strings.Contains(s.row(name), "▸") })
	case k == "x":
		name := d.selected
		// The crash is visible at once: crashing…, then crashed (SIGKILL).
		term.await(at+": "+name+" crashed (SIGKILL)", 2*time.Second, func(s tapeScreen) bool {
			return strings.Contains(row(name)(s), "crashed (SIGKILL)")
		})
	case k == "r":
		name := d.selected
		term.await(at+": "+name+" running again", 60*time.Second, func(s tapeScreen) bool {
			d.track()
			r := row(name)(s)
			return strings.Contains(r, " running") && !strings.Contains(r, "crashed")
		})
		if name == board.Current {
			term.await(at+": the sensors are live again", 30*time.Second, func(s tapeScreen) bool {
				return strings.Contains(s.text(), "LIVE 10 sensors")
			})
		}
	case k == "c":
		term.await(at+": consumer-usage killed itself at the crash point", 30*time.Second, func(s tapeScreen) bool {
			return strings.Contains(s.row(board.Usage), "crashed (SIGKILL)")
		})
	case k == "m":
		next := map[string]string{"naive": "guarded", "guarded": "naive"}[d.mode]
		term.await(at+": consumer-usage restarted in mode "+next, 60*time.Second, func(s tapeScreen) bool {
			d.track()
			pid := tapeRowPID(s.row(board.Usage))
			return strings.Contains(s.text(), "mode "+next) && strings.Contains(s.row(board.Usage), " running") &&
				pid != "" && pid != before
		})
		d.mode = next
	case k == "R":
		term.await(at+": a new baseline: consumer-usage restarted in a group of its own, usage total exact", 60*time.Second, func(s tapeScreen) bool {
			d.track()
			pid := tapeRowPID(s.row(board.Usage))
			total := ""
			for _, l := range s.lines {
				if strings.Contains(l, "total") {
					total = l
				}
			}
			return strings.Contains(s.text(), "-baseline-") && strings.Contains(s.row(board.Usage), " running") &&
				pid != "" && pid != before && strings.Contains(total, "exact")
		})
	case k == "p":
		term.await(at+": the producer paused", 10*time.Second, func(s tapeScreen) bool {
			return strings.Contains(s.row(board.Producer), "paused")
		})
	case k == "q":
		d.track()
		t.Logf("the tapeScreen before q:\n%s", term.last.text())
		term.await(at+": the dashboard ended and the shell is back", 60*time.Second, func(s tapeScreen) bool {
			return !strings.Contains(s.text(), "Processes · lag") && strings.HasSuffix(strings.TrimRight(s.lastLine(), " "), ">")
		})
		d.running, d.quit = false, true
		d.checkNoneLeft()
	default:
		t.Fatalf("%s: the replay checks no effect for this key", at)
	}
}

// track records the processes below the terminal's shell: go run, the
// dashboard and every child it has started so far.
func (d *tapeDashboard) track() {
	for pid, cmd := range tapeDescendants(d.term.shellPID()) {
		d.seen[pid] = cmd
	}
}

// checkNoneLeft: after q every process the dashboard ran is gone (a zombie
// waiting for its reaper counts as gone).
func (d *tapeDashboard) checkNoneLeft() {
	d.t.Logf("after q: checking the %d processes seen below the shell", len(d.seen))
	if len(d.seen) < 7 {
		d.t.Errorf("only %d processes seen below the shell; want go run, the dashboard and its 6 children: %v", len(d.seen), d.seen)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []string
		for pid, cmd := range d.seen {
			if tapeProcessAlive(pid) {
				alive = append(alive, fmt.Sprintf("%d %s", pid, cmd))
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for pid := range d.seen {
				_ = syscall.Kill(pid, syscall.SIGKILL) // ours: do not leak them
			}
			d.t.Fatalf("still alive 10 s after q: %v", alive)
		}
		time.Sleep(100 * time.Millisecond) // polling /proc, nothing to wait on
	}
}

// tapeScreen is one capture of the terminal.
type tapeScreen struct {
	lines  []string
	cursor int // the cursor's row
}

func (s tapeScreen) text() string { return strings.Join(s.lines, "\n") }

func (s tapeScreen) cursorLine() string {
	if s.cursor >= 0 && s.cursor < len(s.lines) {
		return s.lines[s.cursor]
	}
	return ""
}

func (s tapeScreen) lastLine() string {
	for i := len(s.lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(s.lines[i]) != "" {
			return s.lines[i]
		}
	}
	return ""
}

// row is the process table's row of name ("" if not on tapeScreen).
func (s tapeScreen) row(name string) string {
	for _, l := range s.lines {
		f := strings.Fields(strings.Trim(l, "│ "))
		for i, w := range f {
			if w == name && i <= 2 {
				return l
			}
		}
	}
	return ""
}

var tapeRowPIDRx = regexp.MustCompile(`(?:running|starting|replaying \d+%|retrying \S*)\s+(?:ok|alive|…|stuck \d+[smh])\s+(\d+)\s`)

// tapeRowPID is the pid column of a process row ("" when not running).
func tapeRowPID(row string) string {
	if m := tapeRowPIDRx.FindStringSubmatch(row); m != nil {
		return m[1]
	}
	return ""
}

// tapeTerm is a tmux server of the test's own running bash in one window.
type tapeTerm struct {
	t      *testing.T
	socket string
	last   tapeScreen
}

func newTapeTerm(t *testing.T, dir string, width, height int) *tapeTerm {
	term := &tapeTerm{t: t, socket: fmt.Sprintf("krl-tape-%d-%s", os.Getpid(), e2e.RandomSuffix())}
	// The shell VHS starts: bash without profiles, "> " as the prompt. The
	// tape shows the embedded stack: no external broker or store. The
	// dashboard's run directory (with the tape's preloaded topic, ~50 MB)
	// goes under the test's own temp dir, removed at the end.
	shell := fmt.Sprintf("env -u KAFKA_BROKER -u MONGO_URI TMPDIR=%q PS1='> ' bash --noprofile --norc +o history", t.TempDir())
	term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "tape", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-c", dir, shell)
	t.Cleanup(func() {
		for pid := range tapeDescendants(term.shellPID()) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = exec.Command("tmux", "-L", term.socket, "kill-server").Run()
	})
	term.tmux("set-option", "-g", "status", "off")
	term.await("a 120x36 pane", 5*time.Second, func(tapeScreen) bool {
		out := term.tmux("display-message", "-p", "-t", "tape", "#{pane_width}x#{pane_height}")
		return strings.TrimSpace(out) == fmt.Sprintf("%dx%d", width, height)
	})
	term.await("the shell prompt", 10*time.Second, func(s tapeScreen) bool { return strings.HasSuffix(strings.TrimRight(s.lastLine(), " "), ">") })
	return term
}

func (term *tapeTerm) tmux(args ...string) string {
	term.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", term.socket}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (term *tapeTerm) sendLiteral(s string) { term.tmux("send-keys", "-t", "tape", "-l", "--", s) }
func (term *tapeTerm) sendKey(k string)     { term.tmux("send-keys", "-t", "tape", k) }

func (term *tapeTerm) capture() tapeScreen {
	out := term.tmux("capture-pane", "-p", "-t", "tape")
	cur := term.tmux("display-message", "-p", "-t", "tape", "#{cursor_y}")
	y, _ := strconv.Atoi(strings.TrimSpace(cur))
	s := tapeScreen{lines: strings.Split(strings.TrimRight(out, "\n"), "\n"), cursor: y}
	term.last = s
	return s
}

func (term *tapeTerm) shellPID() int {
	out, err := exec.Command("tmux", "-L", term.socket, "display-message", "-p", "-t", "tape", "#{pane_pid}").Output()
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return pid
}

// await polls the tapeScreen until ok holds, failing the test with the last
// tapeScreen after timeout.
func (term *tapeTerm) await(what string, timeout time.Duration, ok func(tapeScreen) bool) {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if ok(term.capture()) {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("%s: not seen within %s; the tapeScreen:\n%s", what, timeout, term.last.text())
		}
		time.Sleep(100 * time.Millisecond) // polling the terminal, nothing to wait on
	}
}

// tapeDescendants returns every process below pid (pid → command line).
func tapeDescendants(root int) map[int]string {
	out := map[int]string{}
	if root <= 0 {
		return out
	}
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := tapeParentPID(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
			out[c] = strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
			queue = append(queue, c)
		}
	}
	return out
}

// tapeParentPID reads the fourth field of /proc/PID/stat (after the command
// name in parentheses, which may hold spaces).
func tapeParentPID(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// tapeProcessAlive: the process exists and is not a zombie.
func tapeProcessAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}
