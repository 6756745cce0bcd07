package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/coder/websocket"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// The kinds of seat a lab is bound to.
const (
	SeatSSH     = "ssh"
	SeatBrowser = "browser"
)

// The browser seat's size until the page sends its own: a client that
// only listens still sees the lab.
const (
	DefaultSeatWidth  = 120
	DefaultSeatHeight = 36
)

// WrongPassDelay holds every wrong passphrase, one guess at a time for
// the whole server: at most one guess a second.
const WrongPassDelay = time.Second

// seatCookie names the cookie that binds a browser to its lab: a random
// token and the server's signature of it (a cookie the server did not
// issue, or issued before a restart, is no seat).
const seatCookie = "krl_seat"

//go:embed web
var webFiles embed.FS

var enterPage = template.Must(template.ParseFS(webFiles, "web/enter.html"))

// webSeats serves the browser seats: the page, its files and the lab's
// WebSocket at /ws, on the same origin.
type webSeats struct {
	s      *Server
	secret []byte
	// guesses makes passphrase guesses one at a time.
	guesses sync.Mutex

	mu    sync.Mutex
	conns map[*websocket.Conn]struct{} // the open seats, for closeAll
}

func newWebSeats(s *Server) *webSeats {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	return &webSeats{s: s, secret: secret, conns: map[*websocket.Conn]struct{}{}}
}

// StartWeb listens for browser seats (Config.HTTP) and serves them; it
// returns the page's URL. Call it after Start.
func (s *Server) StartWeb() (string, error) {
	ln, err := net.Listen("tcp", s.cfg.HTTP)
	if err != nil {
		return "", fmt.Errorf("serve: --http %s: %w", s.cfg.HTTP, err)
	}
	s.seats = newWebSeats(s)
	s.web = &http.Server{
		Handler: s.seats.handler(),
		// A connection that has not sent its request (a WebSocket its
		// upgrade) within the handshake bound is closed, as over SSH.
		ReadHeaderTimeout: s.cfg.Handshake,
		IdleTimeout:       s.cfg.Handshake,
		ErrorLog:          slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelDebug),
	}
	scheme := "http"
	serve := func() error { return s.web.Serve(ln) }
	if s.cfg.TLSCert != "" {
		scheme = "https"
		serve = func() error { return s.web.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey) }
	}
	go func() {
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("web server stopped", "err", err)
		}
	}()
	s.webURL = scheme + "://" + ln.Addr().String() + "/"
	return s.webURL, nil
}

// WebURL is the browser seats' page ("" without --http).
func (s *Server) WebURL() string { return s.webURL }

// handler is the web server's one handler: named files only, no listing.
func (web *webSeats) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", web.page)
	for name, kind := range map[string]string{
		"xterm.js": "text/javascript", "addon-fit.js": "text/javascript", "seat.js": "text/javascript",
		"xterm.css": "text/css", "LICENSE-xterm.txt": "text/plain; charset=utf-8",
	} {
		mux.HandleFunc("GET /"+name, staticFile("web/"+name, kind))
	}
	mux.HandleFunc("POST /enter", web.enter)
	mux.HandleFunc("GET /ws", web.socket)
	return headers(mux)
}

// headers keeps the page to its own origin.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func staticFile(path, kind string) http.HandlerFunc {
	data, err := webFiles.ReadFile(path)
	if err != nil {
		panic(err) // embedded at build time: a missing file is a build defect
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", kind)
		_, _ = w.Write(data)
	}
}

// page is the terminal, or the passphrase form for a browser without a
// seat when the workshop has a passphrase. In an open room the first
// visit issues the seat.
func (web *webSeats) page(w http.ResponseWriter, r *http.Request) {
	if _, ok := web.seat(r); !ok {
		if web.s.cfg.HTTPPass != "" {
			web.form(w, false)
			return
		}
		web.issue(w, r)
	}
	staticFile("web/index.html", "text/html; charset=utf-8")(w, r)
}

func (web *webSeats) form(w http.ResponseWriter, wrong bool) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if wrong {
		w.WriteHeader(http.StatusForbidden)
	}
	_ = enterPage.Execute(w, struct{ Wrong bool }{wrong})
}

// enter checks the passphrase (constant time; a wrong one is held
// WrongPassDelay, one guess at a time) and issues the seat.
func (web *webSeats) enter(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	pass := r.PostFormValue("pass")
	want := web.s.cfg.HTTPPass
	if want == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	web.guesses.Lock()
	ok := subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1
	if !ok {
		time.Sleep(WrongPassDelay)
	}
	web.guesses.Unlock()
	if !ok {
		web.s.cfg.Log.Warn("browser seat refused: wrong passphrase", "remote", r.RemoteAddr)
		web.form(w, true)
		return
	}
	if _, has := web.seat(r); !has {
		web.issue(w, r)
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// issue gives the browser a seat of its own.
func (web *webSeats) issue(w http.ResponseWriter, r *http.Request) {
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	t := hex.EncodeToString(token)
	http.SetCookie(w, &http.Cookie{Name: seatCookie, Value: t + "." + web.sign(t), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	// The page loads in the same response: the socket must find it.
	r.AddCookie(&http.Cookie{Name: seatCookie, Value: t + "." + web.sign(t)})
}

func (web *webSeats) sign(token string) string {
	m := hmac.New(sha256.New, web.secret)
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// seat is the request's seat token, if it carries one this server issued.
func (web *webSeats) seat(r *http.Request) (string, bool) {
	c, err := r.Cookie(seatCookie)
	if err != nil {
		return "", false
	}
	token, sig, ok := strings.Cut(c.Value, ".")
	if !ok || len(token) != 32 || !hmac.Equal([]byte(sig), []byte(web.sign(token))) {
		return "", false
	}
	return token, true
}

// BrowserLabID names the lab of a browser seat's token, as LabID names
// an SSH key's.
func BrowserLabID(token string) string {
	sum := sha256.Sum256([]byte("browser:" + token))
	return hex.EncodeToString(sum[:])[:10]
}

// socket is the seat's terminal: the screen out as binary messages, keys
// and sizes in as JSON ({"type":"input","data":…}, {"type":"resize",
// "cols":…,"rows":…}).
func (web *webSeats) socket(w http.ResponseWriter, r *http.Request) {
	token, ok := web.seat(r)
	if !ok {
		http.Error(w, "no seat: open the workshop's page first", http.StatusForbidden)
		return
	}
	// Accept refuses another origin than the page's own.
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(64 << 10)
	if !web.track(conn) {
		closeWith(conn, websocket.StatusGoingAway, errClosing.Error())
		return
	}
	defer web.untrack(conn)
	id := BrowserLabID(token)
	a, err := web.s.acquire(id, "browser:"+id, SeatBrowser)
	if err != nil {
		closeWith(conn, websocket.StatusTryAgainLater, err.Error())
		return
	}
	web.run(r.Context(), conn, a)
}

// track counts an open seat; false once the server is closing.
func (web *webSeats) track(conn *websocket.Conn) bool {
	web.mu.Lock()
	defer web.mu.Unlock()
	if web.conns == nil {
		return false
	}
	web.conns[conn] = struct{}{}
	return true
}

func (web *webSeats) untrack(conn *websocket.Conn) {
	web.mu.Lock()
	defer web.mu.Unlock()
	delete(web.conns, conn)
}

// closeAll ends every seat (an http.Server's Close leaves upgraded
// connections alone) and takes no more.
func (web *webSeats) closeAll() {
	web.mu.Lock()
	conns := web.conns
	web.conns = nil
	web.mu.Unlock()
	for c := range conns {
		closeWith(c, websocket.StatusGoingAway, errClosing.Error())
	}
}

// run is the seat's session: a tea.Program on the attendee's hub, as an
// SSH session's.
func (web *webSeats) run(ctx context.Context, conn *websocket.Conn, a *attendee) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &socketWriter{ctx: ctx, conn: conn}
	// xterm.js takes 256 colours, on a dark page; asked nothing, told so.
	rend := lipgloss.NewRenderer(out)
	rend.SetColorProfile(termenv.ANSI256)
	rend.SetHasDarkBackground(true)
	win, ok := a.hub.Attach(func(b *board.Board) tea.Model {
		return ui.New(b, attendeeControl{Lab: a.lab, crashes: &a.crashes}, ui.Options{Renderer: rend,
			Banner: "lab " + a.id, Scenarios: a.scenarios})
	})
	if !ok {
		web.s.release(a)
		closeWith(conn, websocket.StatusGoingAway, errClosing.Error())
		return
	}
	in, keys := io.Pipe()
	p := tea.NewProgram(win.Model(), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen(),
		tea.WithFPS(ui.FPS), tea.WithoutSignalHandler(), tea.WithContext(ctx))
	go win.Pump(p.Send)
	done := make(chan struct{})
	var idled atomic.Bool
	if web.s.cfg.Idle > 0 {
		go web.s.closeWhenIdle(win, p, done, &idled)
	}
	go func() {
		p.Send(tea.WindowSizeMsg{Width: DefaultSeatWidth, Height: DefaultSeatHeight})
		readSeat(ctx, conn, keys, p)
		p.Quit()
	}()
	_, err := p.Run()
	close(done)
	keys.Close()
	win.Detach()
	web.s.release(a)
	switch {
	case idled.Load():
		closeWith(conn, websocket.StatusNormalClosure, "closed: no key for "+web.s.cfg.Idle.String()+" (--idle)")
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		conn.CloseNow()
	default:
		closeWith(conn, websocket.StatusNormalClosure, "you left the lab")
	}
}

// seatMessage is what the page sends.
type seatMessage struct {
	Type string `json:"type"`
	Data string `json:"data"`
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
}

// MaxSeatSide bounds a size a page may send; ui bounds what is drawn.
const MaxSeatSide = 10000

// readSeat hands the page's keys to the program's input and its sizes
// to the program, until the socket ends.
func readSeat(ctx context.Context, conn *websocket.Conn, keys io.Writer, p *tea.Program) {
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m seatMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.Type {
		case "input":
			if _, err := io.WriteString(keys, m.Data); err != nil {
				return
			}
		case "resize":
			if m.Cols > 0 && m.Rows > 0 && m.Cols <= MaxSeatSide && m.Rows <= MaxSeatSide {
				p.Send(tea.WindowSizeMsg{Width: m.Cols, Height: m.Rows})
			}
		}
	}
}

// socketWriter is the program's terminal: each write one binary message.
type socketWriter struct {
	ctx  context.Context
	conn *websocket.Conn
}

func (w *socketWriter) Write(b []byte) (int, error) {
	ctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
	defer cancel()
	if err := w.conn.Write(ctx, websocket.MessageBinary, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// closeWith closes the socket with a reason the page shows (a close
// frame's reason holds 123 bytes at most).
func closeWith(conn *websocket.Conn, code websocket.StatusCode, reason string) {
	if len(reason) > 120 {
		reason = reason[:117] + "..."
	}
	_ = conn.Close(code, reason)
}
