package e2e

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// The workshop over SSH, end to end: the real server (krl serve) with its
// embedded store (and broker, unless KAFKA_BROKER names one), real SSH
// clients with a pty (golang.org/x/crypto/ssh), real keys typed into real
// dashboards, and every lab's numbers compared afterwards with its own
// topic and database read independently.

const serveLabs = 5

// serveStopBound is the server's promise (serve.StopBound): a lab's
// processes end within it after its session did.
const serveStopBound = 10 * time.Second

// attendee is one SSH client of the test.
type attendee struct {
	signer gossh.Signer
	lab    string // the lab id the server derives from the key
	raw    net.Conn
	sess   *gossh.Session
	stdin  io.WriteCloser
	out    *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newKey(t *testing.T) (gossh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(signer.PublicKey().Marshal())
	return signer, hex.EncodeToString(sum[:])[:10]
}

// connect opens an SSH session with a 120x36 pty and a shell, as `ssh -tt`
// does.
func connect(t *testing.T, addr, user string, signer gossh.Signer) *attendee {
	t.Helper()
	return connectSized(t, addr, user, signer, 120, 36)
}

// connectSized is connect with a pty of w×h.
func connectSized(t *testing.T, addr, user string, signer gossh.Signer, w, h int) *attendee {
	t.Helper()
	a := &attendee{signer: signer, out: &syncBuffer{}, done: make(chan error, 1)}
	raw, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	a.raw = raw
	c, chans, reqs, err := gossh.NewClientConn(raw, addr, &gossh.ClientConfig{
		User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatalf("ssh handshake with %s: %v", addr, err)
	}
	client := gossh.NewClient(c, chans, reqs)
	t.Cleanup(func() { client.Close() })
	if a.sess, err = client.NewSession(); err != nil {
		t.Fatalf("ssh session: %v", err)
	}
	if err := a.sess.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatalf("pty: %v", err)
	}
	if a.stdin, err = a.sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	a.sess.Stdout, a.sess.Stderr = a.out, a.out
	if err := a.sess.Shell(); err != nil {
		t.Fatalf("shell: %v", err)
	}
	go func() { a.done <- a.sess.Wait() }()
	return a
}

func (a *attendee) press(t *testing.T, keys string) {
	t.Helper()
	if _, err := a.stdin.Write([]byte(keys)); err != nil {
		t.Fatalf("typing %q into lab %s: %v", keys, a.lab, err)
	}
}

// labRow is a lab's line of the server's table (its headless log).
type labRow struct {
	state          string
	procs, crashes int
	group, verdict string
	driftLine      string
	records        int
	line           string
}

// "  3f2a9c01b4  SHA256:abcdefghijkl…  connected  0s  4  1  reset #1  exact (+0.00 h / +0.00 km) over 90 records"
var labRowRE = regexp.MustCompile(`(?m)^\s+([0-9a-f]{10})\s+(?:ssh\s+SHA256:\S+|browser\s+—)\s+(starting|connected|stopped)(?: ×\d+)?(?:, kept \S+)?\s+\S+\s+(\d+)\s+(\d+)\s+(lab start|reset #\d+|\S+)\s+(.*)$`)

// latestRows is the last row printed for every lab.
func latestRows(stderr string) map[string]labRow {
	rows := map[string]labRow{}
	for _, m := range labRowRE.FindAllStringSubmatch(stderr, -1) {
		r := labRow{state: m[2], group: m[5], driftLine: m[6], line: strings.TrimSpace(m[0])}
		r.procs, _ = strconv.Atoi(m[3])
		r.crashes, _ = strconv.Atoi(m[4])
		r.verdict = strings.Fields(m[6] + " ")[0]
		if i := strings.Index(m[6], " over "); i >= 0 {
			fmt.Sscanf(m[6][i:], " over %d record", &r.records) // "1 record", "2 records"
		}
		rows[m[1]] = r
	}
	return rows
}

// awaitRows waits until ok holds for the latest row of every lab in ids.
func awaitRows(t *testing.T, srv *Child, what string, ids []string, timeout time.Duration, ok func(labRow) bool) map[string]labRow {
	t.Helper()
	var rows map[string]labRow
	AwaitCondition(t, what, timeout, 200*time.Millisecond, func() error {
		if done, code := srv.Exited(); done {
			t.Fatalf("%s: the server exited (code %d)", what, code)
		}
		rows = latestRows(srv.StderrTail(1 << 30))
		for _, id := range ids {
			r, seen := rows[id]
			if !seen || !ok(r) {
				return fmt.Errorf("lab %s: %q", id, r.line)
			}
		}
		return nil
	})
	return rows
}

// labProcs lists the live processes of lab id (their command line names
// its topic); id "" is the presenter's lab (topic sensor-data).
func labProcs(id string) []int {
	topic := "sensor-data-" + id
	if id == "" {
		topic = "sensor-data"
	}
	// Only this run's processes (the test's tag in their environment): a
	// dashboard elsewhere on the machine (CI renders the demo beside this
	// pass) runs on sensor-data too.
	var pids []int
	for pid := range taggedProcs(os.Getenv(tagEnv)) {
		cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte("\x00"+topic+"\x00")) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

func TestServeWorkshop(t *testing.T) {
	bin := Binary(t)
	dataDir := filepath.Join(t.TempDir(), "serve")
	external := os.Getenv("KAFKA_BROKER")
	tag := "krl-e2e-" + RandomSuffix()
	t.Setenv(tagEnv, tag)
	args := []string{"serve", "--headless", "--ssh", "127.0.0.1:0", "--data-dir", dataDir,
		"--max-labs", strconv.Itoa(serveLabs), "--keep", "10m", "--auth", "open",
		"--usage-mode", "guarded", "--mongo="}
	if external != "" {
		args = append(args, "--brokers", external)
	} else {
		args = append(args, "--brokers=")
	}
	srv := Start(t, bin, args...)
	var addr string
	AwaitCondition(t, "the server listening", 90*time.Second, 100*time.Millisecond, func() error {
		if done, code := srv.Exited(); done {
			t.Fatalf("the server exited (code %d) before listening", code)
		}
		m := regexp.MustCompile(`msg=serving ssh=(\S+)`).FindStringSubmatch(srv.StderrTail(1 << 30))
		if m == nil {
			return fmt.Errorf("no serving line")
		}
		addr = m[1]
		return nil
	})
	t.Logf("server on %s, data dir %s", addr, dataDir)

	// Five attendees at once, each with a key of their own.
	labs := make([]*attendee, serveLabs)
	ids := make([]string, serveLabs)
	for i := range labs {
		signer, id := newKey(t)
		labs[i] = connect(t, addr, "attendee", signer)
		labs[i].lab, ids[i] = id, id
	}
	for _, a := range labs {
		AwaitCondition(t, "lab "+a.lab+" on the attendee's screen", 60*time.Second, 100*time.Millisecond, func() error {
			if !strings.Contains(a.out.String(), "lab "+a.lab) || !strings.Contains(a.out.String(), "sensor-data-"+a.lab) {
				return fmt.Errorf("screen so far: %q", Tail(a.out.String(), 3))
			}
			return nil
		})
	}
	awaitRows(t, srv, "every lab running and exact", ids, 3*time.Minute, func(r labRow) bool {
		return r.state == "connected" && r.procs == 4 && r.verdict == "exact" && r.records > 0
	})

	// Each crashes its consumer-usage (3 selects it, x), restarts it (r)
	// and resets its lab (R).
	for _, a := range labs {
		a.press(t, "3")
	}
	for _, a := range labs {
		a.press(t, "x")
	}
	awaitRows(t, srv, "consumer-usage crashed in every lab", ids, time.Minute, func(r labRow) bool {
		return r.crashes == 1 && r.procs == 3
	})
	for _, a := range labs {
		a.press(t, "r")
	}
	awaitRows(t, srv, "consumer-usage back in every lab", ids, time.Minute, func(r labRow) bool {
		return r.procs == 4
	})
	for _, a := range labs {
		a.press(t, "R")
	}
	awaitRows(t, srv, "every lab on a new baseline, exact", ids, 2*time.Minute, func(r labRow) bool {
		return r.group == "reset #1" && r.procs == 4 && r.verdict == "exact" && r.records > 0
	})

	// A sixth attendee is over --max-labs: refused with one line.
	sixth, _ := newKey(t)
	over := connect(t, addr, "attendee", sixth)
	select {
	case err := <-over.done:
		var exit *gossh.ExitError
		if !asExitError(err, &exit) || exit.ExitStatus() != 1 {
			t.Errorf("the sixth session ended with %v, want exit status 1", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the sixth session was neither refused nor served within 30 s: %q", over.out.String())
	}
	if got := strings.TrimSpace(over.out.String()); !strings.Contains(got, "this workshop is full") || strings.Count(got, "\n") > 0 {
		t.Errorf("the sixth session was told %q, want one line saying the workshop is full", got)
	}

	// The same sixth key as watch@: the presenter's lab, read-only. x is
	// refused with the note and crashes nothing; it makes no lab; q ends it.
	// (The embedded broker's command line names sensor-data too.)
	presenter := fmt.Sprint(labProcs(""))
	watcher := connect(t, addr, "watch", sixth)
	AwaitCondition(t, "the presenter's lab on the watcher's screen", 60*time.Second, 100*time.Millisecond, func() error {
		if !strings.Contains(watcher.out.String(), "presenter's lab · read-only") {
			return fmt.Errorf("screen so far: %q", Tail(watcher.out.String(), 3))
		}
		return nil
	})
	watcher.press(t, "1")
	watcher.press(t, "x")
	AwaitCondition(t, "the read-only note", 30*time.Second, 100*time.Millisecond, func() error {
		if !strings.Contains(watcher.out.String(), "only ? (help), t (partitions), w (why) and q (quit) work here") {
			return fmt.Errorf("no note yet")
		}
		return nil
	})
	watcher.press(t, "q")
	select {
	case err := <-watcher.done:
		if err != nil {
			t.Errorf("the watch session ended with %v after q, want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch session did not end within 30 s of q")
	}
	if now := fmt.Sprint(labProcs("")); now != presenter || len(labProcs("")) < 4 {
		t.Errorf("the presenter's processes are %s after a watcher typed x, were %s: want the same four or more", now, presenter)
	}
	if n := len(latestRows(srv.StderrTail(1 << 30))); n != serveLabs {
		t.Errorf("the table lists %d labs after a watcher came and went, want %d", n, serveLabs)
	}

	// The first attendee's client dies (connection cut): their lab's
	// processes end within the bound; the others' keep running.
	first := labs[0]
	if n := len(labProcs(first.lab)); n != 4 {
		t.Fatalf("lab %s runs %d processes before the cut, want 4", first.lab, n)
	}
	cut := time.Now()
	first.raw.Close()
	AwaitCondition(t, "lab "+first.lab+"'s processes gone", serveStopBound, 50*time.Millisecond, func() error {
		if left := labProcs(first.lab); len(left) > 0 {
			return fmt.Errorf("still running: %v", left)
		}
		return nil
	})
	t.Logf("lab %s: processes gone %.1f s after its client's connection was cut (bound %s)", first.lab, time.Since(cut).Seconds(), serveStopBound)
	for _, a := range labs[1:] {
		if n := len(labProcs(a.lab)); n != 4 {
			t.Errorf("lab %s runs %d processes after another lab's cut, want 4", a.lab, n)
		}
	}
	awaitRows(t, srv, "lab "+first.lab+" stopped and kept", ids[:1], 30*time.Second, func(r labRow) bool {
		return r.state == "stopped" && r.procs == 0
	})

	// Back with the same key within --keep: the same lab (its crash count
	// and its baseline kept), its processes running again.
	again := connect(t, addr, "attendee", first.signer)
	again.lab = first.lab
	labs[0] = again
	AwaitCondition(t, "lab "+first.lab+" on the screen again", 60*time.Second, 100*time.Millisecond, func() error {
		if !strings.Contains(again.out.String(), "lab "+first.lab) {
			return fmt.Errorf("screen so far: %q", Tail(again.out.String(), 3))
		}
		return nil
	})
	awaitRows(t, srv, "lab "+first.lab+" back, same state", ids[:1], 2*time.Minute, func(r labRow) bool {
		return r.state == "connected" && r.procs == 4 && r.crashes == 1 && r.group == "reset #1" && r.verdict == "exact"
	})
	if n := len(latestRows(srv.StderrTail(1 << 30))); n != serveLabs {
		t.Errorf("the table lists %d labs after the reconnect, want %d (the same lab, not a new one)", n, serveLabs)
	}

	// The server stops: every lab's report written, no process left.
	srv.Signal(syscall.SIGTERM)
	if code, ok := srv.WaitExit(90 * time.Second); !ok || code != 0 {
		t.Fatalf("the server did not stop cleanly within 90 s of SIGTERM (exited %v, code %d)", ok, code)
	}
	awaitNoProcesses(t, tag, nil, 10*time.Second)

	// Every lab's numbers, against its own topic and database read
	// independently: usage exactly what the topic yields (guarded drift 0
	// after a crash and a reset), current state exactly the topic's last
	// messages, and no two labs alike (none read another's topic).
	brokers := external
	if brokers == "" {
		b := Start(t, bin, "broker", "--data-dir", filepath.Join(dataDir, "presenter", "broker"), "--listen", "127.0.0.1:0")
		brokers = b.Listening("kafka", 30*time.Second)
	}
	st := Start(t, bin, "store", "--data-dir", filepath.Join(dataDir, "presenter", "store"), "--listen", "127.0.0.1:0")
	storeAddr := st.Listening("mongo", 30*time.Second)
	seen := map[string]string{}
	for _, id := range ids {
		t.Run("lab-"+id, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dataDir, "labs", id, "report.json"))
			if err != nil {
				t.Fatalf("report: %v", err)
			}
			var r dashReport
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("report: %v", err)
			}
			var rt runTruth
			rt.Mongo, rt.Brokers = "mongodb://"+storeAddr+"/krl_"+id, brokers
			rt.Topic = ReadTopic(t, brokers, "sensor-data-"+id)
			rt.Truth = LastStates(rt.Topic)
			rt.Checkpoints = LoadCheckpoints(t, rt.Mongo)
			rt.Stored = storedTotals(t, rt.Mongo)
			rt.Expected = ExpectedUsage(rt.Topic, rt.Checkpoints)
			checkUsageExact(t, r, rt)
			checkCurrentIsTruth(t, r, rt.Truth)
			key := fmt.Sprint(rt.Truth.Sensors["sensor-01"].Message)
			if other, dup := seen[key]; dup {
				t.Errorf("labs %s and %s show the same sensor-01: one reads the other's topic", id, other)
			}
			seen[key] = id
			t.Logf("lab %s: %d messages in its topic, usage exact over %d sensors", id, len(rt.Topic.Records), len(rt.Expected))
		})
	}
	if external != "" {
		for _, id := range ids {
			deleteTopic(t, external, "sensor-data-"+id)
			deleteTopic(t, external, kafkacfg.DeadLetterTopic("sensor-data-"+id))
			deleteTopic(t, external, kafkacfg.ChangelogTopic("sensor-data-"+id))
		}
	}
}

func asExitError(err error, target **gossh.ExitError) bool {
	e, ok := err.(*gossh.ExitError)
	if ok {
		*target = e
	}
	return ok
}
