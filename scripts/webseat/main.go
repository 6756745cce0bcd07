// Command webseat is a browser seat without the browser, for
// scripts/bench-serve.sh: it opens the workshop's page (which gives it a
// seat cookie), connects the page's WebSocket with it, sends its size as
// the page does, and reads the screen until it is killed, so the server
// draws for it as for a real browser.
//
//	webseat -url http://127.0.0.1:8080/ [-cols 120 -rows 36]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"

	"github.com/coder/websocket"
)

func main() {
	page := flag.String("url", "", "the workshop's page (krl serve --http prints it)")
	cols := flag.Int("cols", 120, "the seat's columns")
	rows := flag.Int("rows", 36, "the seat's rows")
	flag.Parse()
	if err := run(*page, *cols, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "webseat:", err)
		os.Exit(1)
	}
}

func run(page string, cols, rows int) error {
	u, err := url.Parse(page)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-url %q: want http://HOST:PORT/", page)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.Get(page)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", page, resp.Status)
	}
	ws := strings.Replace(page, "http", "ws", 1) + "ws"
	ctx := context.Background()
	conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: client,
		HTTPHeader: http.Header{"Origin": {u.Scheme + "://" + u.Host}}})
	if err != nil {
		return err
	}
	conn.SetReadLimit(-1)
	size, _ := json.Marshal(map[string]any{"type": "resize", "cols": cols, "rows": rows})
	if err := conn.Write(ctx, websocket.MessageText, size); err != nil {
		return err
	}
	for {
		if _, _, err := conn.Read(ctx); err != nil {
			return err
		}
	}
}
