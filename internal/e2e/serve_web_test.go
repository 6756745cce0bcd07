package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A seat in the browser, end to end: the real server with --http and a
// passphrase, a real headless Chromium (Debian's, driven over the DevTools
// protocol) on its page, real keys pressed in the page's terminal.

const webPass = "kafka-forgets-nothing"

var (
	webServingRE = regexp.MustCompile(`msg=serving ssh=\S+ http=(\S+)`)
	webLabRE     = regexp.MustCompile(`lab ([0-9a-f]{10})`)
)

// browser starts a headless Chromium for the test; newSeat opens browser
// contexts in it, each with cookies of its own.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the browser seat's test needs Debian's chromium (.ci/run installs it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("disable-dev-shm-usage", true))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	root, cancelRoot := chromedp.NewContext(alloc)
	t.Cleanup(cancelRoot)
	if err := chromedp.Do(root); err != nil { // starts the browser
		t.Fatalf("chromium: %v", err)
	}
	return root
}

// newSeat opens a browser context of its own (a new cookie jar).
func newSeat(t *testing.T, root context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The page at 1280x800 (docs/img/web-seat.png is taken at it).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return ctx
}

// screen is the page's terminal as text.
func screen(ctx context.Context) (string, error) {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[string](`(document.querySelector(".xterm-rows") || document.body).innerText`))
}

// awaitScreen waits until the page's terminal holds a match of re.
func awaitScreen(t *testing.T, ctx context.Context, what string, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	var m []string
	AwaitCondition(t, what, timeout, 200*time.Millisecond, func() error {
		s, err := screen(ctx)
		if err != nil {
			return err
		}
		if m = re.FindStringSubmatch(s); m == nil {
			return fmt.Errorf("page so far: %q", Tail(s, 4))
		}
		return nil
	})
	return m
}

// enter fills the passphrase form and submits it.
func enter(ctx context.Context, url, pass string) error {
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return chromedp.Do(c,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#pass")),
		chromedp.SendKeys(chromedp.CSS("#pass"), pass),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
	)
}

// press types keys into the page's terminal.
func press(t *testing.T, ctx context.Context, keys string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(c, chromedp.Focus(chromedp.CSS(".xterm-helper-textarea")), chromedp.KeyEvent(keys)); err != nil {
		t.Fatalf("pressing %q in the page: %v", keys, err)
	}
}

func TestBrowserSeat(t *testing.T) {
	bin := Binary(t)
	tag := "krl-e2e-" + RandomSuffix()
	t.Setenv(tagEnv, tag)
	dataDir := filepath.Join(t.TempDir(), "serve")
	srv, _ := startServe(t, bin, dataDir, "--http", "127.0.0.1:0", "--http-pass", webPass)
	var url string
	AwaitCondition(t, "the browser seats' address", 30*time.Second, 100*time.Millisecond, func() error {
		m := webServingRE.FindStringSubmatch(srv.StderrTail(1 << 30))
		if m == nil {
			return fmt.Errorf("no http= on the serving line")
		}
		url = m[1]
		return nil
	})
	alloc := browser(t)

	// A wrong passphrase: refused, no lab.
	first := newSeat(t, alloc)
	start := time.Now()
	if err := enter(first, url, "open sesame"); err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, first, "the wrong passphrase refused", regexp.MustCompile(`That is not the passphrase`), 20*time.Second)
	if d := time.Since(start); d < time.Second {
		t.Errorf("a wrong passphrase was answered in %s, want it held at least 1 s", d)
	} else {
		t.Logf("a wrong passphrase refused after %s", d.Round(time.Millisecond))
	}

	// The right one: the page is the lab's terminal.
	if err := enter(first, url, webPass); err != nil {
		t.Fatal(err)
	}
	lab := awaitScreen(t, first, "the lab on the page", webLabRE, 90*time.Second)[1]
	awaitRows(t, srv, "the browser lab running", []string{lab}, 3*time.Minute, func(r labRow) bool {
		return r.state == "connected" && r.procs == 4 && r.records > 0
	})
	if !regexp.MustCompile(`(?m)^\s+` + lab + `\s+browser\s`).MatchString(srv.StderrTail(1 << 30)) {
		t.Errorf("the table does not show lab %s as a browser seat", lab)
	}

	// 3 then x: that lab's consumer-usage crashed, on the page and in the table.
	press(t, first, "3")
	press(t, first, "x")
	awaitScreen(t, first, "the crash on the page", regexp.MustCompile(`consumer-usage[^\n]*crashed|crashed[^\n]*consumer-usage`), 30*time.Second)
	awaitRows(t, srv, "consumer-usage crashed in the browser lab", []string{lab}, time.Minute, func(r labRow) bool {
		return r.crashes == 1 && r.procs == 3
	})

	// A reload: the same lab.
	if err := chromedp.Do(first, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if again := awaitScreen(t, first, "the lab after a reload", webLabRE, 60*time.Second)[1]; again != lab {
		t.Errorf("after a reload the page shows lab %s, want %s", again, lab)
	}

	// Another browser: a lab of its own.
	second := newSeat(t, alloc)
	if err := enter(second, url, webPass); err != nil {
		t.Fatal(err)
	}
	other := awaitScreen(t, second, "the second browser's lab", webLabRE, 90*time.Second)[1]
	if other == lab {
		t.Errorf("a second browser got lab %s, the first one's", other)
	}
	t.Logf("browser labs: %s (crashed, reloaded) and %s", lab, other)

	// The first lab again, as it was: its crash counted, its processes
	// started again when its page came back.
	awaitRows(t, srv, "the browser lab back after the reload", []string{lab}, time.Minute, func(r labRow) bool {
		return r.state == "connected" && r.procs == 4 && r.crashes == 1
	})
	if shot := os.Getenv("KRL_WEB_SCREENSHOT"); shot != "" {
		awaitScreen(t, first, "consumer-usage running on the page", regexp.MustCompile(`consumer-usage\s+\S*\s*running`), 30*time.Second)
		png, err := chromedp.Run(first, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := screen(first); !strings.Contains(s, "lab "+lab) {
		t.Errorf("the first page lost its lab: %q", Tail(s, 4))
	}
}

// The browser seats' port held as the SSH port is: a silent socket, and
// one that sent half a WebSocket upgrade, are closed at the handshake
// bound; a page's files are served, a directory is not.
func TestBrowserSeatHoldsTheDoor(t *testing.T) {
	bin := Binary(t)
	tag := "krl-e2e-" + RandomSuffix()
	t.Setenv(tagEnv, tag)
	srv, _ := startServe(t, bin, filepath.Join(t.TempDir(), "serve"), "--http", "127.0.0.1:0",
		"--handshake-timeout", hostileHandshake.String())
	var addr string
	AwaitCondition(t, "the browser seats' address", 30*time.Second, 100*time.Millisecond, func() error {
		m := webServingRE.FindStringSubmatch(srv.StderrTail(1 << 30))
		if m == nil {
			return fmt.Errorf("no http= on the serving line")
		}
		addr = strings.TrimSuffix(strings.TrimPrefix(m[1], "http://"), "/")
		return nil
	})
	for _, c := range []struct{ name, send string }{
		{"a silent socket", ""},
		{"half a WebSocket upgrade", "GET /ws HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\n"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if c.send != "" {
			if _, err := conn.Write([]byte(c.send)); err != nil {
				t.Fatal(err)
			}
		}
		after, closed := closedAfter(conn, start, hostileHandshake+10*time.Second)
		conn.Close()
		if !closed {
			t.Errorf("%s: still open after %s (--handshake-timeout %s)", c.name, after.Round(time.Millisecond), hostileHandshake)
		} else {
			t.Logf("%s: closed by the server after %s (--handshake-timeout %s)", c.name, after.Round(time.Millisecond), hostileHandshake)
		}
	}
	for path, want := range map[string]int{"/": 200, "/xterm.js": 200, "/seat.js": 200, "/web/": 404, "/../go.mod": 404, "/ws": 403} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
