package serve

import (
	"strings"
	"testing"
	"time"
)

// The headless log prints the table once, then only what changed: a
// quiet minute prints nothing, a row printed shows its real uptime.
func TestChangeLogPrintsChangesOnly(t *testing.T) {
	var c ChangeLog
	h := TableHead{MaxLabs: 5, Keep: 10 * time.Minute}
	const kept = " · a lab is kept 10m0s after its last session, then deleted (directory, topics, database)"
	if got := c.Next(nil, h); got != "labs 0/5"+kept+"\nno attendee connected yet\n" {
		t.Errorf("first: %q", got)
	}
	if got := c.Next(nil, h); got != "" {
		t.Errorf("nothing changed, printed %q", got)
	}
	a := LabRow{ID: "3f2a9c01b4", Fingerprint: "SHA256:abcdefghijklmnop", Sessions: 1, State: "connected", Verdict: "exact", Records: 10, Uptime: 3 * time.Second, Running: 4, Group: "demo-usage-3f2a9c01b4"}
	b := LabRow{ID: "77aa00bb11", Fingerprint: "SHA256:zz", Sessions: 1, State: "connected", Uptime: time.Second, Running: 4, Group: "demo-usage-77aa00bb11"}
	got := c.Next([]LabRow{a, b}, h)
	if !strings.HasPrefix(got, "labs 2/5"+kept+"\nLAB ") || !strings.Contains(got, "3f2a9c01b4") || !strings.Contains(got, "77aa00bb11") || !strings.Contains(got, " 3s ") {
		t.Errorf("two labs: %q", got)
	}
	// A minute on, nothing happened but the clock and the records
	// counted: nothing printed.
	a.Uptime, b.Uptime, a.Records = time.Minute, 58*time.Second, 120
	if got := c.Next([]LabRow{a, b}, h); got != "" {
		t.Errorf("only the uptime moved, printed %q", got)
	}
	// The first records counted are news.
	b.Verdict, b.Records = "exact", 1
	if got := c.Next([]LabRow{a, b}, h); !strings.Contains(got, "77aa00bb11") || strings.Contains(got, "3f2a9c01b4") {
		t.Errorf("first records: %q", got)
	}
	// One lab's consumer crashes: its row alone, with its uptime.
	a.Uptime, a.Crashes, a.Running = 65*time.Second, 1, 3
	got = c.Next([]LabRow{a, b}, h)
	if strings.Contains(got, "labs 2/5") || strings.Contains(got, "77aa00bb11") || !strings.Contains(got, "3f2a9c01b4") || !strings.Contains(got, "1m5s") || !strings.Contains(got, "120 records") {
		t.Errorf("one crash: %q", got)
	}
	// The keep countdown moves by the minute, the second lab is dropped,
	// and one session is refused.
	a.State, a.Sessions, a.KeepLeft = "stopped", 0, 9*time.Minute+59*time.Second
	c.Next([]LabRow{a, b}, h)
	a.KeepLeft = 9*time.Minute + 10*time.Second
	if got := c.Next([]LabRow{a, b}, h); got != "" {
		t.Errorf("keep moved within a minute, printed %q", got)
	}
	h.Dropped, h.Refused = 1, 1
	got = c.Next([]LabRow{a}, h)
	if !strings.HasPrefix(got, "labs 1/5"+kept+" · 1 deleted · 1 refused (full)\n") || !strings.HasSuffix(got, "lab 77aa00bb11 dropped\n") {
		t.Errorf("dropped and refused: %q", got)
	}
}
