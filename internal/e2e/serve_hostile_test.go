package e2e

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	gossh "golang.org/x/crypto/ssh"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// The workshop server tried as a hostile client would: huge windows,
// silent sockets, a banner and nothing more, a login without a session,
// a session left alone, and a stop while a lab's consumer is down. Each
// logs its figure.

const (
	hostileHandshake = 2 * time.Second
	hostileIdle      = 6 * time.Second
	hostileSilent    = 45
	hostileKeep      = 3 * time.Second
	// serveMaxWaiting is the server's cap (serve.MaxWaiting) on
	// connections open at once without a session.
	serveMaxWaiting = 64
	// hostileRSSBound is the serve process's memory the huge windows may
	// not push it past (it idles near 50 MB).
	hostileRSSBound = 200 << 20
)

// startServe starts `tui serve --headless` on a port of its own and
// returns it with the address it listens on.
func startServe(t *testing.T, bin, dataDir string, extra ...string) (*Child, string) {
	t.Helper()
	args := []string{"serve", "--headless", "--ssh", "127.0.0.1:0", "--data-dir", dataDir,
		"--max-labs", "3", "--keep", "10m", "--auth", "open", "--mongo="}
	if b := os.Getenv("KAFKA_BROKER"); b != "" {
		args = append(args, "--brokers", b)
	} else {
		args = append(args, "--brokers=")
	}
	srv := Start(t, bin, append(args, extra...)...)
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
	return srv, addr
}

// rss is a process's resident memory in bytes.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("rss of %d: %v", pid, err)
	}
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS for %d", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// peakRSS samples a process's memory for d and returns the most seen.
func peakRSS(t *testing.T, pid int, d time.Duration) int64 {
	t.Helper()
	peak := int64(0)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		peak = max(peak, rss(t, pid))
	}
	return peak
}

// sockets counts a process's open sockets.
func sockets(pid int) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// closedAfter waits until the server closes c (a read fails) and returns
// how long after start that was.
func closedAfter(c net.Conn, start time.Time, limit time.Duration) (time.Duration, bool) {
	_ = c.SetReadDeadline(start.Add(limit))
	buf := make([]byte, 256)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			if ok := asNetError(err, &ne); ok && ne.Timeout() {
				return time.Since(start), false
			}
			return time.Since(start), true
		}
	}
}

func asNetError(err error, target *net.Error) bool {
	ne, ok := err.(net.Error)
	if ok {
		*target = ne
	}
	return ok
}

func TestServeHostile(t *testing.T) {
	bin := Binary(t)
	tag := "krl-e2e-" + RandomSuffix()
	t.Setenv(tagEnv, tag)
	dataDir := filepath.Join(t.TempDir(), "serve")
	srv, addr := startServe(t, bin, dataDir,
		"--handshake-timeout", hostileHandshake.String(), "--idle", hostileIdle.String(), "--keep", hostileKeep.String())
	pid := srv.PID()
	t.Logf("server on %s: RSS %d MB at rest", addr, rss(t, pid)>>20)

	t.Run("huge window", func(t *testing.T) {
		signer, _ := newKey(t)
		a := connectSized(t, addr, "watch", signer, 65535, 65535)
		note := "window 65535x65535 is larger than 500x200: drawn at 500x200"
		AwaitCondition(t, "the screen saying the window is too large", 30*time.Second, 100*time.Millisecond, func() error {
			if !strings.Contains(a.out.String(), note) {
				return fmt.Errorf("screen so far: %q", Tail(a.out.String(), 2))
			}
			return nil
		})
		peak := peakRSS(t, pid, 3*time.Second)
		t.Logf("65535x65535 window: server RSS peak %d MB over 3 s", peak>>20)
		if peak > hostileRSSBound {
			t.Errorf("65535x65535 window: server RSS %d MB, want under %d MB", peak>>20, hostileRSSBound>>20)
		}
		if err := a.sess.WindowChange(40, math.MaxInt32); err != nil {
			t.Fatalf("window change: %v", err)
		}
		note = fmt.Sprintf("window %dx40 is larger than 500x200: drawn at 500x40", math.MaxInt32)
		AwaitCondition(t, "the screen saying the new window is too large", 30*time.Second, 100*time.Millisecond, func() error {
			if !strings.Contains(a.out.String(), note) {
				return fmt.Errorf("screen so far: %q", Tail(a.out.String(), 2))
			}
			return nil
		})
		peak = peakRSS(t, pid, 3*time.Second)
		t.Logf("window change to 2^31-1 columns: server RSS peak %d MB over 3 s", peak>>20)
		if peak > hostileRSSBound {
			t.Errorf("2^31-1 columns: server RSS %d MB, want under %d MB", peak>>20, hostileRSSBound>>20)
		}
		a.raw.Close()
		after := peakRSS(t, pid, 2*time.Second)
		t.Logf("client gone: server RSS %d MB", after>>20)
		if after > hostileRSSBound {
			t.Errorf("client gone: server RSS %d MB, want under %d MB", after>>20, hostileRSSBound>>20)
		}
	})

	t.Run("silent connections", func(t *testing.T) {
		before := sockets(pid)
		start := time.Now()
		took := make([]time.Duration, hostileSilent)
		closed := make([]bool, hostileSilent)
		var wg sync.WaitGroup
		for i := range hostileSilent {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatalf("dial %d: %v", i, err)
			}
			defer c.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				took[i], closed[i] = closedAfter(c, start, hostileHandshake+5*time.Second)
			}()
		}
		wg.Wait()
		left, slowest := 0, time.Duration(0)
		for i := range closed {
			if !closed[i] {
				left++
			}
			slowest = max(slowest, took[i])
		}
		serverLeft := sockets(pid) - before
		t.Logf("%d silent connections: %d left open by the server after %.1f s (the last closed %.1f s after they opened; --handshake-timeout %s); server sockets beyond its own: %d",
			hostileSilent, left, (hostileHandshake + 5*time.Second).Seconds(), slowest.Seconds(), hostileHandshake, serverLeft)
		if left > 0 || serverLeft > 0 {
			t.Errorf("%d of %d silent connections still open (%d server sockets), want none", left, hostileSilent, serverLeft)
		}
	})

	t.Run("more silent connections than the cap", func(t *testing.T) {
		n := serveMaxWaiting + 6
		start := time.Now()
		conns := make([]net.Conn, n)
		for i := range conns {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatalf("dial %d: %v", i, err)
			}
			defer c.Close()
			conns[i] = c
		}
		early := 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if took, closed := closedAfter(c, start, hostileHandshake+5*time.Second); closed && took < hostileHandshake/2 {
					mu.Lock()
					early++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		t.Logf("%d silent connections at once: %d closed at once (cap %d), the rest after the bound", n, early, serveMaxWaiting)
		if early != n-serveMaxWaiting {
			t.Errorf("%d of %d closed at once, want the %d over the cap", early, n, n-serveMaxWaiting)
		}
	})

	t.Run("banner only", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		if _, err := c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")); err != nil {
			t.Fatal(err)
		}
		took, closed := closedAfter(c, start, hostileHandshake+5*time.Second)
		t.Logf("banner only: closed %.1f s after it was sent (--handshake-timeout %s)", took.Seconds(), hostileHandshake)
		if !closed || took < hostileHandshake-time.Second {
			t.Errorf("banner only: closed %v after %v, want closed after about %s", closed, took, hostileHandshake)
		}
	})

	t.Run("login without a session", func(t *testing.T) {
		signer, _ := newKey(t)
		raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		start := time.Now()
		c, chans, reqs, err := gossh.NewClientConn(raw, addr, &gossh.ClientConfig{
			User: "attendee", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
		})
		if err != nil {
			t.Fatalf("ssh handshake: %v", err)
		}
		client := gossh.NewClient(c, chans, reqs)
		ended := make(chan struct{})
		go func() { _ = client.Wait(); close(ended) }()
		select {
		case <-ended:
			took := time.Since(start)
			t.Logf("logged in, no session (ssh -N): closed %.1f s after it connected (--handshake-timeout %s)", took.Seconds(), hostileHandshake)
		case <-time.After(hostileHandshake + 5*time.Second):
			t.Errorf("a login without a session was still open after %s", hostileHandshake+5*time.Second)
		}
	})

	var dropped string
	t.Run("idle session", func(t *testing.T) {
		quiet, id := newKey(t)
		dropped = id
		a := connect(t, addr, "attendee", quiet)
		start := time.Now()
		busySigner, _ := newKey(t)
		busy := connect(t, addr, "watch", busySigner)
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Second):
					_ = busy.sess.WindowChange(36, 120)
				}
			}
		}()
		defer close(stop)
		select {
		case err := <-a.done:
			took := time.Since(start)
			t.Logf("a session without input: closed %.1f s after it opened (--idle %s): %v", took.Seconds(), hostileIdle, err)
			if took < hostileIdle-time.Second {
				t.Errorf("closed after %v, before --idle %s", took, hostileIdle)
			}
		case <-time.After(hostileIdle + 10*time.Second):
			t.Fatalf("lab %s: a session without input still open %s after it opened", id, hostileIdle+10*time.Second)
		}
		if !strings.Contains(a.out.String(), "closed: no key for "+hostileIdle.String()) {
			t.Errorf("the idle session was not told why: %q", Tail(a.out.String(), 2))
		}
		select {
		case err := <-busy.done:
			t.Errorf("a session with input every second was closed: %v", err)
		default:
		}
	})

	// The idle session's lab, not reconnected within --keep, is dropped
	// and deleted; checked on the broker and store after the stop.
	if dropped != "" {
		AwaitCondition(t, "lab "+dropped+" dropped", hostileKeep+30*time.Second, 100*time.Millisecond, func() error {
			if !strings.Contains(srv.StderrTail(1<<30), "lab "+dropped+" dropped") {
				return fmt.Errorf("not yet")
			}
			return nil
		})
		if _, err := os.Stat(filepath.Join(dataDir, "labs", dropped)); !os.IsNotExist(err) {
			t.Errorf("lab %s dropped, its directory is still there (%v)", dropped, err)
		}
		if tail := srv.StderrTail(1 << 30); strings.Contains(tail, "not all it left was deleted") {
			t.Errorf("the drop left something: %s", Tail(tail, 5))
		}
	}

	// Last: the server stops while a lab's consumer-usage is crashed.
	signer, id := newKey(t)
	a := connect(t, addr, "attendee", signer)
	a.lab = id
	stop := make(chan struct{})
	defer close(stop)
	go func() { // input, so --idle leaves the session alone
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				_ = a.sess.WindowChange(36, 120)
			}
		}
	}()
	awaitRows(t, srv, "the lab running", []string{id}, 3*time.Minute, func(r labRow) bool {
		return r.state == "connected" && r.procs == 4
	})
	a.press(t, "3")
	a.press(t, "x")
	awaitRows(t, srv, "consumer-usage crashed", []string{id}, time.Minute, func(r labRow) bool {
		return r.crashes == 1 && r.procs == 3
	})
	start := time.Now()
	srv.Signal(syscall.SIGTERM)
	code, ok := srv.WaitExit(60 * time.Second)
	took := time.Since(start)
	t.Logf("SIGTERM with lab %s's consumer-usage crashed: the server exited %.1f s later (code %d)", id, took.Seconds(), code)
	if !ok || code != 0 || took > serveStopBound {
		t.Errorf("stop with a crashed consumer: exited %v with %d after %v, want 0 within %s", ok, code, took, serveStopBound)
	}
	if !strings.Contains(srv.StderrTail(1<<30), "lab not waited for: a process is not running") {
		t.Errorf("the log does not say the lab was not waited for")
	}
	awaitNoProcesses(t, tag, nil, 10*time.Second)

	if dropped != "" {
		checkDropped(t, bin, dataDir, dropped, id)
	}
}

// checkDropped reads the shared broker and store after the server
// stopped: the dropped lab's topics and database are gone, the kept lab's
// are there.
func checkDropped(t *testing.T, bin, dataDir, dropped, kept string) {
	t.Helper()
	brokers := os.Getenv("KAFKA_BROKER")
	if brokers == "" {
		b := Start(t, bin, "broker", "--data-dir", filepath.Join(dataDir, "presenter", "broker"), "--listen", "127.0.0.1:0")
		brokers = b.Listening("kafka", 30*time.Second)
	}
	st := Start(t, bin, "store", "--data-dir", filepath.Join(dataDir, "presenter", "store"), "--listen", "127.0.0.1:0")
	storeAddr := st.Listening("mongo", 30*time.Second)
	topics := topicNames(t, brokers)
	for _, tc := range []struct {
		id   string
		want bool
	}{{dropped, false}, {kept, true}} {
		var have []string
		for _, n := range topics {
			if strings.HasPrefix(n, "sensor-data-"+tc.id) {
				have = append(have, n)
			}
		}
		var exists bool
		WithStore(t, "mongodb://"+storeAddr+"/krl_"+tc.id, func(ctx context.Context, st *store.Store) (err error) {
			exists, err = st.Exists(ctx)
			return err
		})
		_, dirErr := os.Stat(filepath.Join(dataDir, "labs", tc.id))
		t.Logf("lab %s (kept %v): topics %v, database %v, directory %v", tc.id, tc.want, have, exists, dirErr == nil)
		if (len(have) > 0) != tc.want || exists != tc.want || (dirErr == nil) != tc.want {
			t.Errorf("lab %s: topics %v, database %v, directory %v; want all %v", tc.id, have, exists, dirErr == nil, tc.want)
		}
	}
	if os.Getenv("KAFKA_BROKER") != "" {
		for _, n := range topics {
			if strings.HasPrefix(n, "sensor-data-"+kept) {
				deleteTopic(t, brokers, n)
			}
		}
	}
}

// topicNames lists the broker's topics.
func topicNames(t *testing.T, brokers string) []string {
	t.Helper()
	admin, err := kafka.NewAdminClient(kafkacfgtest.Admin(brokers))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer admin.Close()
	md, err := admin.GetMetadata(nil, true, 10000)
	if err != nil {
		t.Fatalf("broker %s: %v", brokers, err)
	}
	var names []string
	for n := range md.Topics {
		names = append(names, n)
	}
	return names
}
