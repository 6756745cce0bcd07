package serve

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
)

// Defaults of the bounds on connections (Config.Handshake, Config.Idle).
const (
	DefaultHandshake = 30 * time.Second
	// DefaultIdle is off: an attendee who only watches the screen sends
	// nothing and is still in the room.
	DefaultIdle = 0
)

// MaxWaiting is how many connections may be open at once without a
// session yet (in the handshake, or logged in with nothing open): more
// are closed as they arrive, so silent sockets cannot pile up.
const MaxWaiting = 64

// connGuard closes a connection that has no session with a terminal
// Handshake after it opened or after its last session ended: a silent
// socket, one that sent only a banner, one that never logs in, and an
// `ssh -N` all end there.
type connGuard struct {
	s     *Server
	conn  net.Conn
	timer *time.Timer

	mu       sync.Mutex
	sessions int
	waiting  bool // counted in Server.waiting
	closed   bool
}

type guardKey struct{}

// guardConn is the server's ConnCallback.
func (s *Server) guardConn(ctx ssh.Context, conn net.Conn) net.Conn {
	s.mu.Lock()
	if s.waiting >= MaxWaiting {
		s.mu.Unlock()
		s.cfg.Log.Warn("connection closed: too many without a session", "remote", conn.RemoteAddr().String(), "waiting", MaxWaiting)
		return nil
	}
	s.waiting++
	s.mu.Unlock()
	g := &connGuard{s: s, conn: conn, waiting: true}
	g.timer = time.AfterFunc(s.cfg.Handshake, g.expire)
	ctx.SetValue(guardKey{}, g)
	return &guardedConn{Conn: conn, g: g}
}

func (g *connGuard) expire() {
	g.mu.Lock()
	idle := g.sessions == 0 && !g.closed
	g.mu.Unlock()
	if idle {
		g.s.cfg.Log.Info("connection closed: no session with a terminal", "remote", g.conn.RemoteAddr().String(), "within", g.s.cfg.Handshake)
		g.conn.Close()
	}
}

// stopWaiting takes the connection out of the waiting count once.
func (g *connGuard) stopWaiting() {
	if g.waiting {
		g.waiting = false
		g.s.mu.Lock()
		g.s.waiting--
		g.s.mu.Unlock()
	}
}

func (g *connGuard) sessionStarted() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sessions++
	g.stopWaiting()
	g.timer.Stop()
}

func (g *connGuard) sessionEnded() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions--; g.sessions == 0 && !g.closed {
		g.timer.Reset(g.s.cfg.Handshake)
	}
}

func (g *connGuard) connClosed() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.stopWaiting()
	g.timer.Stop()
}

type guardedConn struct {
	net.Conn
	g    *connGuard
	once sync.Once
}

func (c *guardedConn) Close() error {
	c.once.Do(c.g.connClosed)
	return c.Conn.Close()
}

// guardSession counts a terminal session on its connection's guard (the
// outermost middleware; a session without a pty is told so and ends).
func guardSession(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		g, _ := sess.Context().Value(guardKey{}).(*connGuard)
		if _, _, ok := sess.Pty(); ok && g != nil {
			g.sessionStarted()
			defer g.sessionEnded()
		}
		next(sess)
	}
}

// lastInput is when a session last sent a key, a mouse event or a new
// window size (its screen's redraws are not input).
type lastInput struct{ at atomic.Int64 }

func (l *lastInput) touch()               { l.at.Store(time.Now().UnixNano()) }
func (l *lastInput) since() time.Duration { return time.Since(time.Unix(0, l.at.Load())) }

// isInput is a message that came from the client.
func isInput(msg tea.Msg) bool {
	switch msg.(type) {
	case tea.KeyMsg, tea.MouseMsg, tea.WindowSizeMsg:
		return true
	}
	return false
}

// closeWhenIdle ends the session's program once nothing came from the
// client for Idle, and reports whether it did; it returns when done
// closes.
func (s *Server) closeWhenIdle(w *Window, p *tea.Program, done <-chan struct{}, idled *atomic.Bool) {
	every := max(min(s.cfg.Idle/4, time.Second), 10*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if w.input.since() >= s.cfg.Idle {
				idled.Store(true)
				p.Quit()
				return
			}
		}
	}
}

// idleLine is what a session closed for being idle is told.
func (s *Server) idleLine(sess ssh.Session) {
	wish.Fatalln(sess, fmt.Sprintf("closed: no key for %s (--idle); connect again to carry on", s.cfg.Idle))
}
