package observe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/api"
)

// HTTPTimeout bounds one request to a consumer when the caller's context
// allows longer: the consumers answer from memory or a few documents, and a
// dashboard tick must not wait on a process that is being killed.
const HTTPTimeout = 2 * time.Second

// maxBody caps what is read from a consumer (a /state of thousands of
// sensors is well under this).
const maxBody = 16 << 20

// The answers' bodies are internal/api's; these names keep the client's
// vocabulary.
type (
	State       = api.State
	SensorState = api.SensorState
	Usage       = api.Usage
	UsageTotal  = api.UsageTotal
	SensorUsage = api.SensorUsage
)

// HTTPError is a consumer's non-200 answer. Message is the "error" field of
// its JSON body, or the body's text when it is not JSON.
type HTTPError struct {
	URL     string
	Status  int
	Message string
}

// Error is short on purpose: it is shown in a panel's status line, where
// the status and the reason matter and the URL does not.
func (e *HTTPError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// client has no timeout of its own: every request carries a context
// bounded by HTTPTimeout. Its connections are kept between polls: a lab
// asks some five times a second, and a connection per request cost the
// dashboard more than the request (the dial, two goroutines, a socket in
// TIME_WAIT for a minute). A killed consumer's connections are closed by
// the kernel, and a GET that finds its idle connection closed is sent
// again on a new one; a frozen consumer's keeps the request unanswered
// until its deadline, as a new connection would.
var client = &http.Client{Transport: &http.Transport{IdleConnTimeout: 10 * time.Second}}

// FetchState asks consumer-current at baseURL ("http://host:port" or just
// "host:port", as its Listening event announces) for GET /state.
func FetchState(ctx context.Context, baseURL string) (State, error) {
	var s State
	err := getJSON(ctx, baseURL, "/state", &s)
	return s, err
}

// FetchUsage asks consumer-query at baseURL for GET /usage.
func FetchUsage(ctx context.Context, baseURL string) (Usage, error) {
	var u Usage
	err := getJSON(ctx, baseURL, "/usage", &u)
	return u, err
}

func getJSON(ctx context.Context, baseURL, path string, into any) error {
	if baseURL == "" {
		return errors.New("observe: no address to ask")
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	url := strings.TrimRight(baseURL, "/") + path
	ctx, cancel := context.WithTimeout(ctx, HTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("observe: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within %s: %w", HTTPTimeout, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("not listening (connection refused): %w", err)
	case err != nil:
		return fmt.Errorf("observe: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("observe: GET %s: reading body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &HTTPError{URL: url, Status: resp.StatusCode, Message: errorText(body)}
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("observe: GET %s: unexpected answer: %w", url, err)
	}
	return nil
}

// errorText extracts {"error": "...", "reason": "..."} (the reason code
// first: it survives truncation) or falls back to the trimmed body.
func errorText(body []byte) string {
	var e struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		if e.Reason != "" {
			return e.Reason + ": " + e.Error
		}
		return e.Error
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return text
}
