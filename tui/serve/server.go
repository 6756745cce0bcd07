// Package serve is the workshop over SSH: one shared broker and store,
// the presenter's lab, and a lab of their own for every attendee who
// connects with `ssh -p PORT HOST`, rendered by the same dashboard.
//
// Guarantees:
//   - An attendee's lab is named by the server from the SHA-256 of their
//     public key: their topic sensor-data-<lab>, consumer-usage group
//     demo-usage-<lab>, database krl_<lab> and run directory labs/<lab>.
//     Nothing the client sends names a lab; keys act on that lab only.
//   - At most MaxLabs attendee labs exist (connected or kept); the next new
//     key is refused with one line, never left waiting.
//   - When an attendee's last session ends, however it ends, the lab's
//     processes are stopped (SIGTERM, SIGKILL after the supervisor's stop
//     timeout): none runs without a session. The lab (its board, topic,
//     database and settings) is kept for Keep; the same key reconnecting
//     within it gets the lab back and its processes start again.
//   - `watch` sessions see the presenter's lab read-only.
//   - Close stops every lab; the supervisors' process groups and
//     parent-death signals leave no child behind.
package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/muesli/termenv"
	gossh "golang.org/x/crypto/ssh"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lab"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// WatchUser is the SSH user name of the presenter's read-only view.
const WatchUser = "watch"

// Auth modes.
const (
	AuthOpen = "open" // any public key
	AuthKeys = "keys" // the keys of an authorized_keys file
)

// Config is what serve's flags decide.
type Config struct {
	Listen         string
	DataDir        string
	MaxLabs        int
	Keep           time.Duration
	Auth           string
	AuthorizedKeys string
	// Handshake bounds a connection without a session with a terminal:
	// from its opening, or from its last session's end (default 30 s).
	Handshake time.Duration
	// Idle closes a session nothing came from (no key, no resize) for
	// this long; 0 never does.
	Idle time.Duration
	// HTTP is the listen address of the browser seats ("": none);
	// HTTPPass the workshop's passphrase for them ("": an open room).
	// With TLSCert and TLSKey they are served over HTTPS.
	HTTP, HTTPPass  string
	TLSCert, TLSKey string
	// Lab is the template of every lab: the presenter's as is (it starts
	// the embedded broker and store unless Brokers / Mongo are set), the
	// attendees' on the presenter's broker and store.
	Lab lab.Config
	Log *slog.Logger
}

// Server is the workshop server.
type Server struct {
	cfg       Config
	presenter *labHub
	srv       *ssh.Server
	listener  net.Listener
	web       *http.Server
	seats     *webSeats
	webURL    string

	mu      sync.Mutex
	labs    map[string]*attendee
	closing bool
	// refused counts sessions turned away because the workshop was full.
	refused int
	// dropped counts labs dropped after --keep (and deleted);
	// discarding holds the ids being deleted, closed when done.
	dropped    int
	discarding map[string]chan struct{}
	// waiting counts connections without a session yet (guard.go).
	waiting int
}

// labHub is a lab with its dashboard hub and scenario session.
type labHub struct {
	lab       *lab.Lab
	hub       *Hub
	scenarios *scenario.Session
	logFile   io.Closer
	launched  chan struct{} // closed when Launch returned
	launchErr error
	// progress is the latest scenario's narration (nil: none run yet),
	// for the server's table.
	progress atomic.Pointer[scenario.Progress]
}

func newLabHub(cfg lab.Config) (*labHub, error) {
	log, logFile, err := lab.OpenLog(cfg.RunDir)
	if err != nil {
		return nil, err
	}
	cfg.Log = log
	l, err := lab.New(cfg)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	h := &labHub{lab: l, logFile: logFile, launched: make(chan struct{})}
	h.hub = NewHub(l.NewBoard(), l.Inputs())
	onProgress := func(p scenario.Progress) {
		h.progress.Store(&p)
		l.Narrate(p)
	}
	h.scenarios = &scenario.Session{Runner: scenario.Runner{Host: l, Interactive: true, OnProgress: onProgress}}
	return h, nil
}

func (h *labHub) launch(ctx context.Context) {
	defer close(h.launched)
	h.launchErr = h.lab.Launch(ctx)
}

func (h *labHub) shutdown(ctx context.Context) {
	h.scenarios.Stop()
	_ = h.lab.Shutdown(ctx)
	h.hub.Close()
	h.logFile.Close()
}

// attendee is one attendee's lab.
type attendee struct {
	*labHub
	id, fingerprint string
	seat            string // SeatSSH or SeatBrowser
	created         time.Time
	crashes         atomic.Int64

	// Under Server.mu.
	sessions int
	detached time.Time // when the last session ended; zero while attached
	expiry   *time.Timer

	// opMu makes a stop (last session gone) and a start (a session back)
	// one after the other, in the order they were asked.
	opMu    sync.Mutex
	stopped bool
}

// New prepares a server; Start launches the presenter's lab and listens.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxLabs < 1 {
		return nil, errors.New("serve: --max-labs must be at least 1")
	}
	if cfg.Handshake <= 0 {
		cfg.Handshake = DefaultHandshake
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "ssh"), 0o700); err != nil {
		return nil, fmt.Errorf("serve: data dir: %w", err)
	}
	pcfg := cfg.Lab
	pcfg.RunDir = filepath.Join(cfg.DataDir, "presenter")
	presenter, err := newLabHub(pcfg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s := &Server{cfg: cfg, presenter: presenter, labs: map[string]*attendee{}, discarding: map[string]chan struct{}{}}
	opts := []ssh.Option{
		wish.WithAddress(cfg.Listen),
		// Created once, reused: attendees' known_hosts stay valid.
		wish.WithHostKeyPath(filepath.Join(cfg.DataDir, "ssh", "host_ed25519")),
		wish.WithMiddleware(
			sessionEnd,
			bm.MiddlewareWithProgramHandler(s.program, termenv.ANSI256),
			needTerminal,
			guardSession,
		),
		func(srv *ssh.Server) error { srv.ConnCallback = s.guardConn; return nil },
	}
	switch cfg.Auth {
	case AuthOpen:
		opts = append(opts,
			wish.WithPublicKeyAuth(func(ssh.Context, ssh.PublicKey) bool { return true }),
			// Lets a client without a key in, to be told it needs one.
			wish.WithKeyboardInteractiveAuth(func(ssh.Context, gossh.KeyboardInteractiveChallenge) bool { return true }))
	case AuthKeys:
		opts = append(opts, wish.WithAuthorizedKeys(cfg.AuthorizedKeys))
	default:
		return nil, fmt.Errorf("serve: --auth %q: want open or keys", cfg.Auth)
	}
	if s.srv, err = wish.NewServer(opts...); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return s, nil
}

// Presenter is the presenter's lab (for the server's own dashboard).
func (s *Server) Presenter() *lab.Lab { return s.presenter.lab }

// Start listens (so a port in use fails before anything starts), then
// launches the presenter's lab (and with it the embedded broker and store)
// and serves. It returns the address it listens on.
func (s *Server) Start(ctx context.Context) (string, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return "", fmt.Errorf("serve: --ssh %s: %w", s.cfg.Listen, err)
	}
	s.presenter.launch(ctx)
	if s.presenter.launchErr != nil {
		ln.Close()
		return "", fmt.Errorf("the presenter's lab did not start: %w", s.presenter.launchErr)
	}
	s.listener = ln
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
			s.cfg.Log.Error("ssh server stopped", "err", err)
		}
	}()
	return ln.Addr().String(), nil
}

// LabID names the lab of a public key: the first 10 hex digits of the
// SHA-256 of its wire form (never anything the client chose).
func LabID(key ssh.PublicKey) string {
	sum := sha256.Sum256(key.Marshal())
	return hex.EncodeToString(sum[:])[:10]
}

// LabConfig is lab id's configuration on the presenter's broker and store.
func (s *Server) LabConfig(id string) (lab.Config, error) {
	brokers, mongo := s.presenter.lab.Addresses()
	uri, err := store.WithDatabase(mongo, "krl_"+id)
	if err != nil {
		return lab.Config{}, fmt.Errorf("the store's URI: %w", err)
	}
	c := s.cfg.Lab
	c.Brokers, c.Mongo, c.Cluster, c.StoreLatency = brokers, uri, 0, 0
	c.Topic = c.Topic + "-" + id
	c.UsageGroup = "demo-usage-" + id
	c.RunDir = filepath.Join(s.cfg.DataDir, "labs", id)
	return c, nil
}

// errClosing is what a session is told when the server is stopping;
// fullError when the workshop is full.
var errClosing = errors.New("the workshop server is stopping")

func (s *Server) fullError() error {
	return fmt.Errorf("this workshop is full: all %d labs are in use (--max-labs %d); ask the presenter for a place", s.cfg.MaxLabs, s.cfg.MaxLabs)
}

// acquire returns the lab named id (an SSH key's LabID, a browser
// seat's BrowserLabID), creating and launching it if there is none.
func (s *Server) acquire(id, fingerprint, seat string) (*attendee, error) {
	// A lab of this id being deleted: the new one waits, so the deletion
	// cannot take its topic, database or directory.
	for {
		s.mu.Lock()
		deleted := s.discarding[id]
		if deleted == nil {
			break
		}
		s.mu.Unlock()
		<-deleted
	}
	defer s.mu.Unlock()
	if s.closing {
		return nil, errClosing
	}
	if a := s.labs[id]; a != nil {
		a.sessions++
		a.detached = time.Time{}
		if a.expiry != nil {
			a.expiry.Stop()
			a.expiry = nil
		}
		go s.startAgain(a)
		return a, nil
	}
	if len(s.labs) >= s.cfg.MaxLabs {
		s.refused++
		s.cfg.Log.Warn("session refused: the workshop is full", "labs", len(s.labs), "seat", seat, "fingerprint", fingerprint)
		return nil, s.fullError()
	}
	cfg, err := s.LabConfig(id)
	if err != nil {
		return nil, err
	}
	h, err := newLabHub(cfg)
	if err != nil {
		return nil, err
	}
	a := &attendee{labHub: h, id: id, fingerprint: fingerprint, seat: seat, created: time.Now(), sessions: 1}
	s.labs[id] = a
	s.cfg.Log.Info("lab created", "lab", id, "seat", seat, "fingerprint", fingerprint, "topic", cfg.Topic, "labs", len(s.labs))
	go h.launch(context.Background())
	return a, nil
}

// release ends one of a's sessions; the last one stops its processes and
// starts the keep timer.
func (s *Server) release(a *attendee) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.sessions--
	if a.sessions > 0 || s.closing {
		return
	}
	a.detached = time.Now()
	a.expiry = time.AfterFunc(s.cfg.Keep, func() { s.expire(a) })
	s.cfg.Log.Info("session ended: stopping the lab's processes", "lab", a.id, "keep", s.cfg.Keep)
	go s.stopProcesses(a)
}

// StopBound is how long an attendee's processes may take to end after
// their session did: the supervisor's SIGTERM-then-SIGKILL timeout (6 s)
// and some slack.
const StopBound = 10 * time.Second

// stopProcesses stops every process of a's lab (producer first, so
// nothing is published that no consumer reads).
func (s *Server) stopProcesses(a *attendee) {
	a.opMu.Lock()
	defer a.opMu.Unlock()
	<-a.launched
	s.mu.Lock()
	still := a.sessions == 0
	s.mu.Unlock()
	if !still || a.stopped {
		return
	}
	names := roleNames(a.lab)
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.lab.Stop(n) }()
	}
	wg.Wait()
	a.stopped = true
	a.lab.Note("the attendee's session ended: every process of this lab stopped; it is kept for " + s.cfg.Keep.String())
	s.cfg.Log.Info("lab processes stopped", "lab", a.id)
}

// startAgain restarts the processes of a lab whose session came back.
func (s *Server) startAgain(a *attendee) {
	a.opMu.Lock()
	defer a.opMu.Unlock()
	<-a.launched
	if !a.stopped {
		return
	}
	// Consumers first, the producer last: none misses a message.
	names := roleNames(a.lab)
	slices.SortStableFunc(names, func(x, y string) int {
		if (x == board.Producer) == (y == board.Producer) {
			return 0
		}
		if x == board.Producer {
			return 1
		}
		return -1
	})
	a.lab.Note("the attendee reconnected: the lab's processes start again on its topic and database")
	for _, n := range names {
		if err := a.lab.Start(n); err != nil {
			s.cfg.Log.Warn("restart after reconnect failed", "lab", a.id, "process", n, "err", err)
		}
	}
	a.stopped = false
	s.cfg.Log.Info("lab processes started again", "lab", a.id)
}

// roleNames lists the lab's own processes (no shared infrastructure).
func roleNames(l *lab.Lab) []string {
	var names []string
	l.Observe(func(b *board.Board) {
		for _, n := range b.Names() {
			if n == board.Broker || n == board.Store {
				continue
			}
			names = append(names, n)
		}
	})
	return names
}

// expire drops a lab nobody came back to within Keep.
func (s *Server) expire(a *attendee) {
	s.mu.Lock()
	if s.labs[a.id] != a || a.sessions > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.labs, a.id)
	deleted := make(chan struct{})
	s.discarding[a.id] = deleted
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.discarding, a.id)
		s.dropped++
		s.mu.Unlock()
		close(deleted)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a.shutdown(ctx)
	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer dcancel()
	if err := s.discard(dctx, a.id); err != nil {
		s.cfg.Log.Warn("lab dropped, but not all it left was deleted", "lab", a.id, "err", err)
	} else {
		s.cfg.Log.Info("lab dropped: not reconnected within --keep; its topics, database and directory deleted", "lab", a.id, "keep", s.cfg.Keep)
	}
}

type cleanupKey struct{}

// sessionRenderer styles a session's dashboard for the client's terminal
// (TERM and the environment it sent) at ANSI256 at least. Unlike wish's
// MakeRenderer it asks the terminal nothing: that query reads the session
// until the terminal answers, and a client that never answers (a script,
// some terminals) would see nothing until its first key, which the query
// then swallows. The background is taken as dark unless COLORFGBG says
// otherwise (OpenSSH sends it only with SendEnv).
func sessionRenderer(sess ssh.Session) *lipgloss.Renderer {
	pty, _, _ := sess.Pty()
	env := environ(append(sess.Environ(), "TERM="+pty.Term))
	r := lipgloss.NewRenderer(sess, termenv.WithEnvironment(env), termenv.WithUnsafe(), termenv.WithColorCache(true))
	if r.ColorProfile() > termenv.ANSI256 {
		r.SetColorProfile(termenv.ANSI256)
	}
	r.SetHasDarkBackground(!lightBackground(env.Getenv("COLORFGBG")))
	return r
}

// lightBackground reads COLORFGBG ("15;0": white on black): backgrounds 7
// and 15 are light.
func lightBackground(colorfgbg string) bool {
	parts := strings.Split(colorfgbg, ";")
	bg := parts[len(parts)-1]
	return bg == "7" || bg == "15"
}

// environ is a session's environment for termenv.
type environ []string

func (e environ) Environ() []string { return e }

func (e environ) Getenv(k string) string {
	for _, v := range slices.Backward(e) {
		if after, ok := strings.CutPrefix(v, k+"="); ok {
			return after
		}
	}
	return ""
}

// program is the wish handler: one tea.Program per session, on the
// presenter's hub (watch) or the attendee's own.
func (s *Server) program(sess ssh.Session) *tea.Program {
	key := sess.PublicKey()
	if key == nil {
		wish.Fatalln(sess, "no public key offered: this workshop names your lab after your SSH key; create one with ssh-keygen -t ed25519 and connect again")
		return nil
	}
	r := sessionRenderer(sess)
	var (
		w       *Window
		ok      bool
		release func()
	)
	if sess.User() == WatchUser {
		w, ok = s.presenter.hub.Attach(func(b *board.Board) tea.Model {
			return ui.New(b, readOnlyControl{}, ui.Options{Renderer: r, ReadOnly: true,
				Banner: "presenter's lab · read-only"})
		})
		release = func() {}
	} else {
		a, err := s.acquire(LabID(key), gossh.FingerprintSHA256(key), SeatSSH)
		if err != nil {
			wish.Fatalln(sess, err.Error())
			return nil
		}
		w, ok = a.hub.Attach(func(b *board.Board) tea.Model {
			return ui.New(b, attendeeControl{Lab: a.lab, crashes: &a.crashes}, ui.Options{Renderer: r,
				Banner: "lab " + a.id, Scenarios: a.scenarios})
		})
		release = func() { s.release(a) }
	}
	if !ok {
		release()
		wish.Fatalln(sess, errClosing.Error())
		return nil
	}
	p := tea.NewProgram(w.Model(), append(bm.MakeOptions(sess), tea.WithAltScreen(), tea.WithFPS(ui.FPS))...)
	go w.Pump(p.Send)
	done := make(chan struct{})
	var idled atomic.Bool
	if s.cfg.Idle > 0 {
		go s.closeWhenIdle(w, p, done, &idled)
	}
	// The middleware calls the next handler once the program ended,
	// whatever ended it (q, the client gone, idle, the server closing).
	sess.Context().SetValue(cleanupKey{}, func() {
		close(done)
		w.Detach()
		release()
		if idled.Load() {
			s.idleLine(sess)
		}
	})
	return p
}

// needTerminal turns away a session without a pty (ssh HOST CMD, or
// stdin not a terminal) with what to type instead.
func needTerminal(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if _, _, ok := sess.Pty(); !ok {
			wish.Fatalln(sess, "the lab is a terminal dashboard: connect from a terminal, or force one with ssh -t")
			return
		}
		next(sess)
	}
}

// sessionEnd runs after the session's program: its cleanup.
func sessionEnd(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if f, ok := sess.Context().Value(cleanupKey{}).(func()); ok {
			f()
		}
		next(sess)
	}
}

// PresenterWindow is the presenter's own dashboard on their lab, every
// key working (the serve process's screen, p).
func (s *Server) PresenterWindow() (*Window, bool) {
	return s.presenter.hub.Attach(func(b *board.Board) tea.Model {
		return ui.New(b, s.presenter.lab, ui.Options{Banner: "presenter's lab", Scenarios: s.presenter.scenarios})
	})
}
