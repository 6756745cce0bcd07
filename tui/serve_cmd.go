package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"github.com/kafka-recovery-lab/krl/tui/serve"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

type serveFlags struct {
	serve.Config
	headless bool
}

// authFlag is --auth open or --auth keys (FILE: joinAuthFile).
type authFlag struct{ mode string }

func (a *authFlag) String() string { return a.mode }
func (a *authFlag) Set(v string) error {
	switch v {
	case serve.AuthOpen, serve.AuthKeys:
		a.mode = v
		return nil
	}
	return fmt.Errorf("want open or keys FILE, got %q", v)
}

// joinAuthFile turns "--auth keys FILE" into "--auth keys
// --authorized-keys FILE": the contract's two-word form, which the flag
// package would otherwise stop at.
func joinAuthFile(args []string) []string {
	out := make([]string, 0, len(args)+1)
	for i := 0; i < len(args); i++ {
		out = append(out, args[i])
		if (args[i] == "--auth" || args[i] == "-auth") && i+2 < len(args) && args[i+1] == serve.AuthKeys &&
			!strings.HasPrefix(args[i+2], "-") {
			out = append(out, args[i+1], "--authorized-keys", args[i+2])
			i += 2
		}
	}
	return out
}

func parseServeFlags(args []string, stdout io.Writer) (serveFlags, error) {
	var f serveFlags
	auth := authFlag{mode: serve.AuthOpen}
	fs := flag.NewFlagSet("krl serve", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: krl serve [flags]

The workshop over SSH: one shared broker and store, the presenter's lab, and
for every attendee who connects (ssh -p PORT HOST) a lab of their own; user
`+serve.WatchUser+` shows the presenter's lab read-only (ssh -p PORT `+serve.WatchUser+`@HOST).
With --http ADDR, a browser that opens http://ADDR/ gets a lab of its own too.

flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.Listen, "ssh", "127.0.0.1:2222", "listen `ADDR` for SSH (loopback by default; 0.0.0.0:2222 for a room)")
	fs.IntVar(&f.MaxLabs, "max-labs", serve.DefaultMaxLabs(), "attendee labs at most (default sized to this machine: "+serve.MaxLabsRule()+")")
	fs.DurationVar(&f.Keep, "keep", 10*time.Minute, "keep a disconnected attendee's lab this long for a reconnect with the same key")
	fs.Var(&auth, "auth", "open (any public key: a room on a private network) or keys FILE (the keys of an authorized_keys file)")
	fs.StringVar(&f.AuthorizedKeys, "authorized-keys", "", "the `FILE` of --auth keys (--auth keys FILE sets it)")
	fs.DurationVar(&f.Handshake, "handshake-timeout", serve.DefaultHandshake, "close a connection without a session with a terminal after this long (a silent socket, a client that never logs in, ssh -N)")
	fs.DurationVar(&f.Idle, "idle", serve.DefaultIdle, "close a session that sent no key and no resize for this long (0, the default: never, since a room may only watch); its lab is kept for --keep")
	fs.StringVar(&f.HTTP, "http", "", "also serve browser seats at `ADDR` (a page with the lab's terminal; loopback 127.0.0.1:8080, or 0.0.0.0:8080 for a room)")
	fs.StringVar(&f.HTTPPass, "http-pass", os.Getenv("KRL_HTTP_PASS"), "the workshop's passphrase for browser seats (empty: any browser that opens the page gets a lab) (env KRL_HTTP_PASS)")
	fs.StringVar(&f.TLSCert, "tls-cert", "", "serve the browser seats over HTTPS with this certificate `FILE` (and --tls-key)")
	fs.StringVar(&f.TLSKey, "tls-key", "", "the private key `FILE` of --tls-cert")
	fs.StringVar(&f.DataDir, "data-dir", filepath.Join(os.TempDir(), "krl-serve"), "the server's directory: host key, the presenter's and every attendee's lab")
	fs.BoolVar(&f.headless, "headless", false, "no screen: log the table of labs to stderr")
	fs.StringVar(&f.Lab.Brokers, "brokers", os.Getenv("KAFKA_BROKER"), "Kafka bootstrap servers; empty starts the embedded broker (env KAFKA_BROKER)")
	fs.StringVar(&f.Lab.Mongo, "mongo", os.Getenv("MONGO_URI"), "MongoDB URI; empty starts the embedded store (env MONGO_URI)")
	fs.IntVar(&f.Lab.Sensors, "sensors", 10, "simulated sensors per lab")
	fs.DurationVar(&f.Lab.Interval, "interval", time.Second, "time between two messages of one sensor")
	fs.StringVar(&f.Lab.UsageMode, "usage-mode", string(lesson.Naive), "consumer-usage mode in every lab: naive (the article) or guarded")
	fs.StringVar(&f.Lab.UsageReset, "usage-reset", "latest", "consumer-usage offset reset: latest or earliest")
	fs.DurationVar(&f.Lab.OffsetsRetention, "offsets-retention", 0, "the workshop's broker deletes a group's committed offsets once the group has been empty for `D` (0: the broker's default, 7 days), for every lab on it (the offsets-expire scenario)")
	if err := cli.Parse(fs, joinAuthFile(args)); err != nil {
		return f, err
	}
	if auth.mode == serve.AuthKeys && f.AuthorizedKeys == "" {
		return f, cli.Usagef("--auth keys needs a FILE: --auth keys ~/.ssh/authorized_keys")
	}
	f.Auth = auth.mode
	if f.Auth == serve.AuthKeys {
		data, err := os.ReadFile(f.AuthorizedKeys)
		if err != nil {
			return f, cli.Usagef("--auth keys %s: %v", f.AuthorizedKeys, err)
		}
		if _, err := serve.CheckAuthorizedKeys(data); err != nil {
			return f, cli.Usagef("--auth keys %s: %v", f.AuthorizedKeys, err)
		}
	}
	if f.Handshake <= 0 || f.Idle < 0 {
		return f, cli.Usagef("--handshake-timeout must be positive and --idle not negative, got %s and %s", f.Handshake, f.Idle)
	}
	if _, _, err := net.SplitHostPort(f.Listen); err != nil {
		return f, cli.Usagef("--ssh %q: %v", f.Listen, err)
	}
	if err := checkWebFlags(f.Config); err != nil {
		return f, err
	}
	if f.MaxLabs < 1 || f.MaxLabs > 500 {
		return f, cli.Usagef("--max-labs must be between 1 and 500, got %d", f.MaxLabs)
	}
	if f.Keep < 0 {
		return f, cli.Usagef("--keep must not be negative, got %s", f.Keep)
	}
	if err := checkLabFlags(f.Lab); err != nil {
		return f, err
	}
	if err := checkOffsetsRetention(f.Lab); err != nil {
		return f, err
	}
	f.Lab.Topic = telemetry.DefaultTopic
	return f, nil
}

func serveMain(args []string) int {
	f, err := parseServeFlags(args, os.Stdout)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if err := checkTerminal(); err != nil && !f.headless {
		return cli.Exit(os.Stderr, fmt.Errorf("krl serve's screen needs a terminal (%v): run it in one, or add --headless to run without", err))
	}
	if f.DataDir, err = filepath.Abs(f.DataDir); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if err := os.MkdirAll(f.DataDir, 0o755); err != nil {
		return cli.Exit(os.Stderr, fmt.Errorf("--data-dir %s: %w", f.DataDir, err))
	}
	logf, err := os.OpenFile(filepath.Join(f.DataDir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return cli.Exit(os.Stderr, fmt.Errorf("--data-dir %s: %w", f.DataDir, err))
	}
	defer logf.Close()
	var logOut io.Writer = logf
	if f.headless {
		logOut = io.MultiWriter(logf, os.Stderr)
	}
	f.Log = slog.New(slog.NewTextHandler(logOut, nil))
	srv, err := serve.New(f.Config)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	defer func() {
		if r := recover(); r != nil {
			srv.KillAll()
			panic(r)
		}
	}()
	fmt.Fprintf(os.Stderr, "starting the shared broker and store and the presenter's lab in %s ...\n", f.DataDir)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	addr, err := srv.Start(ctx)
	if err != nil {
		stopServer(srv, sigs)
		cancel()
		return cli.Exit(os.Stderr, err)
	}
	cancel() // from here on, signals are the loop's
	page := ""
	if f.HTTP != "" {
		if page, err = srv.StartWeb(); err != nil {
			stopServer(srv, sigs)
			return cli.Exit(os.Stderr, err)
		}
	}
	f.Log.Info("serving", "ssh", addr, "http", page, "max_labs", f.MaxLabs, "keep", f.Keep, "auth", f.Auth, "data_dir", f.DataDir)
	fmt.Fprint(os.Stderr, connectLines(addr, page))
	code := cli.ExitOK
	if f.headless {
		serveHeadless(srv, f, sigs)
	} else if err := serveScreen(srv, f, addr, sigs); err != nil {
		code = cli.Exit(os.Stderr, err)
	}
	stopServer(srv, sigs)
	return code
}

// connectLines is what the presenter reads out to the room.
func connectLines(addr, page string) string {
	host, port, _ := net.SplitHostPort(addr)
	if host == "0.0.0.0" || host == "::" || host == "" {
		host = "THIS-HOST"
	}
	lines := fmt.Sprintf("attendees:  ssh -p %s %s\n", port, host)
	if page != "" {
		for _, any := range []string{"://0.0.0.0:", "://[::]:"} {
			page = strings.Replace(page, any, "://THIS-HOST:", 1)
		}
		lines += fmt.Sprintf("browser:    %s\n", page)
	}
	return lines + fmt.Sprintf("watch:      ssh -p %s %s@%s\n", port, serve.WatchUser, host)
}

// checkWebFlags checks the browser seats' flags.
func checkWebFlags(c serve.Config) error {
	if c.HTTP != "" {
		if _, _, err := net.SplitHostPort(c.HTTP); err != nil {
			return cli.Usagef("--http %q: %v", c.HTTP, err)
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return cli.Usagef("--tls-cert and --tls-key go together")
	}
	if c.TLSCert != "" && c.HTTP == "" {
		return cli.Usagef("--tls-cert serves the browser seats: it needs --http ADDR")
	}
	if c.HTTPPass != "" && c.HTTP == "" {
		return cli.Usagef("--http-pass is the browser seats' passphrase: it needs --http ADDR")
	}
	return nil
}

// stopServer ends every lab; a second signal kills what is left at once.
func stopServer(srv *serve.Server, sigs <-chan os.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		if _, ok := <-sigs; ok {
			srv.KillAll()
			cancel()
		}
	}()
	srv.Close(ctx)
}

// serveHeadless logs the table of labs, then what changes in it (read
// every 2 s), until a signal.
func serveHeadless(srv *serve.Server, f serveFlags, sigs <-chan os.Signal) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	var changes serve.ChangeLog
	for {
		select {
		case sig := <-sigs:
			f.Log.Info("signal, stopping", "signal", sig.String())
			return
		case <-tick.C:
			if t := changes.Next(srv.Labs(), srv.Head()); t != "" {
				fmt.Fprint(os.Stderr, indent(t))
			}
		}
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// serveScreen shows the table of labs; p opens the presenter's own
// dashboard (q in it comes back), q stops the server.
func serveScreen(srv *serve.Server, f serveFlags, addr string, sigs <-chan os.Signal) error {
	stop := make(chan struct{})
	go func() {
		<-sigs
		close(stop)
	}()
	for {
		m := newTableModel(srv, connectLines(addr, srv.WebURL()))
		p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithoutSignalHandler(), tea.WithFPS(ui.FPS))
		go func() {
			<-stop
			p.Quit()
		}()
		res, err := p.Run()
		if err != nil {
			return fmt.Errorf("screen: %w", err)
		}
		if tm, ok := res.(tableModel); !ok || !tm.openPresenter {
			return nil
		}
		w, ok := srv.PresenterWindow()
		if !ok {
			return nil
		}
		dp := tea.NewProgram(w.Model(), tea.WithAltScreen(), tea.WithoutSignalHandler(), tea.WithFPS(ui.FPS))
		go w.Pump(dp.Send)
		ended := make(chan struct{})
		go func() {
			select {
			case <-stop:
				dp.Quit()
			case <-ended:
			}
		}()
		_, err = dp.Run()
		close(ended)
		w.Detach()
		select {
		case <-stop:
			return nil
		default:
		}
		if err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
	}
}
