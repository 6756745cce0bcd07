package lab

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestPostControl: the query goes out encoded, a 200's JSON comes back in
// reply, any other answer is an error with its "error" or its body, and a
// request nobody answered wraps a *url.Error (armLocked tells a child that
// crashed at the point it was arming by it).
func TestPostControl(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.Method != http.MethodPost || r.URL.Query().Get("to") != "a b&c" {
				http.Error(w, "bad request "+r.Method+" "+r.URL.RawQuery, http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"delivered": 3}`))
		case "/refused":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error": "already switching"}`))
		default:
			http.Error(w, "no such endpoint", http.StatusNotFound)
		}
	}))
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()

	var reply struct {
		Delivered int `json:"delivered"`
	}
	if err := postControl(ctx, addr, "/ok", url.Values{"to": {"a b&c"}}, "switch", &reply); err != nil || reply.Delivered != 3 {
		t.Fatalf("200: err %v, reply %+v", err, reply)
	}
	err := postControl(ctx, addr, "/refused", nil, "switch", nil)
	if err == nil || err.Error() != "switch: 409 Conflict: already switching" {
		t.Fatalf("409: %v", err)
	}
	err = postControl(ctx, addr, "/gone", nil, "switch", nil)
	if err == nil || err.Error() != "switch: 404 Not Found: no such endpoint" {
		t.Fatalf("404: %v", err)
	}
	srv.Close()
	err = postControl(ctx, addr, "/ok", nil, "switch", nil)
	var unanswered *url.Error
	if !errors.As(err, &unanswered) {
		t.Fatalf("closed server: %v, want a *url.Error", err)
	}
}
