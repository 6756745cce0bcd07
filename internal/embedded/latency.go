package embedded

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// latencyProxy accepts clients on ln and relays each connection to target,
// holding every chunk a client sends for delay before passing it on: each
// request (a MongoDB command is one round trip) then takes at least delay
// longer. Answers are relayed at once. It stops when ctx ends, closing its
// listener and every relayed connection.
type latencyProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	log    *slog.Logger

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func (p *latencyProxy) serve(ctx context.Context) {
	p.conns = map[net.Conn]struct{}{}
	stop := context.AfterFunc(ctx, func() {
		_ = p.ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	defer stop()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				p.log.Error("store latency proxy: accept", "error", err)
			}
			break
		}
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.relay(ctx, c) }()
	}
	p.wg.Wait()
}

func (p *latencyProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *latencyProxy) relay(ctx context.Context, client net.Conn) {
	var d net.Dialer
	server, err := d.DialContext(ctx, "tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.track(client, true)
	p.track(server, true)
	defer func() {
		_ = client.Close()
		_ = server.Close()
		p.track(client, false)
		p.track(server, false)
	}()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
	go func() { p.delayed(ctx, server, client); done <- struct{}{} }()
	<-done // either side closing ends the pair
}

// delayed copies src to dst, each chunk delay after it was read; chunks
// keep their order.
func (p *latencyProxy) delayed(ctx context.Context, dst, src net.Conn) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	q := make(chan chunk, 1024)
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case q <- chunk{time.Now().Add(p.delay), buf[:n]}:
				case <-ctx.Done():
					return
				case <-stopped:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if wait := time.Until(c.at); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
}
