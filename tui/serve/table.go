package serve

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// LabRow is one attendee lab on the server's table: who, since when, what
// they broke and whether their usage is still exact, so the presenter sees
// who is stuck.
type LabRow struct {
	ID string `json:"id"`
	// Seat: ssh or browser; Fingerprint the SSH key's (a browser seat's
	// is "browser:" and its lab id).
	Seat        string `json:"seat"`
	Fingerprint string `json:"fingerprint"`
	Sessions    int    `json:"sessions"`
	// State: starting, connected, or stopped (kept KeepLeft more).
	State    string        `json:"state"`
	KeepLeft time.Duration `json:"keep_left_ns,omitempty"`
	Uptime   time.Duration `json:"uptime_ns"`
	Crashes  int64         `json:"crashes"`
	Running  int           `json:"running"`
	// Drift: the usage panel's total verdict and drift.
	Verdict string  `json:"verdict"`
	DriftH  float64 `json:"drift_hours"`
	DriftKm float64 `json:"drift_km"`
	// Records: usage records consumer-query answered for; Group:
	// consumer-usage's group (a reset-lab gives it a new one).
	Records int64  `json:"records"`
	Group   string `json:"group"`
	// Scenario: the guided scenario the lab is on, its step and its
	// checks ("" none yet).
	Scenario string `json:"scenario,omitempty"`
}

// Labs is the table as of now, oldest lab first.
func (s *Server) Labs() []LabRow {
	s.mu.Lock()
	labs := make([]*attendee, 0, len(s.labs))
	rows := map[*attendee]LabRow{}
	now := time.Now()
	for _, a := range s.labs {
		labs = append(labs, a)
		r := LabRow{ID: a.id, Seat: a.seat, Fingerprint: a.fingerprint, Sessions: a.sessions, Uptime: now.Sub(a.created).Round(time.Second)}
		switch {
		case a.sessions > 0:
			r.State = "connected"
		default:
			r.State = "stopped"
			r.KeepLeft = max(0, s.cfg.Keep-now.Sub(a.detached)).Round(time.Second)
		}
		rows[a] = r
	}
	s.mu.Unlock()
	slices.SortFunc(labs, func(x, y *attendee) int { return x.created.Compare(y.created) })
	out := make([]LabRow, 0, len(labs))
	for _, a := range labs {
		r := rows[a]
		r.Crashes = a.crashes.Load()
		r.Scenario = scenarioCell(a.progress.Load())
		select {
		case <-a.launched:
		default:
			if r.State == "connected" {
				r.State = "starting"
			}
		}
		a.hub.Inspect(func(b *board.Board) {
			for _, p := range b.Processes() {
				if p.Alive {
					r.Running++
				}
			}
			r.Group = b.Process(board.Usage).GroupID
			u := b.Usage()
			if u.Total.Recorded != nil {
				r.Records = u.Total.Recorded.Records
			}
			r.Verdict = string(u.Total.Verdict)
			if d := u.Total.Drift; d != nil {
				r.DriftH, r.DriftKm = d.Hours(), d.Km()
			}
		})
		out = append(out, r)
	}
	return out
}

// FormatTable renders rows as the server's table (its screen and its
// headless log).
func FormatTable(rows []LabRow, head TableHead) string {
	var b strings.Builder
	b.WriteString(head.line(len(rows)))
	if len(rows) == 0 {
		b.WriteString("no attendee connected yet\n")
		return b.String()
	}
	writeRows(&b, rows)
	return b.String()
}

// TableHead is what the table's first line says: the labs in use of
// the bound, what is kept of a lab and for how long, and the labs
// dropped and sessions turned away so far.
type TableHead struct {
	MaxLabs, Dropped, Refused int
	Keep                      time.Duration
}

// Head is the table's first line as of now.
func (s *Server) Head() TableHead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return TableHead{MaxLabs: s.cfg.MaxLabs, Dropped: s.dropped, Refused: s.refused, Keep: s.cfg.Keep}
}

func (h TableHead) line(labs int) string {
	line := fmt.Sprintf("labs %d/%d · a lab is kept %s after its last session, then deleted (directory, topics, database)", labs, h.MaxLabs, h.Keep)
	if h.Dropped > 0 {
		line += fmt.Sprintf(" · %d deleted", h.Dropped)
	}
	if h.Refused > 0 {
		line += fmt.Sprintf(" · %d refused (full)", h.Refused)
	}
	return line + "\n"
}

// writeRows writes rows under the table's column names.
func writeRows(w io.Writer, rows []LabRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAB\tSEAT\tKEY\tSTATE\tUPTIME\tPROCS\tCRASHES\tBASELINE\tUSAGE DRIFT\tSCENARIO")
	for _, r := range rows {
		state := r.State
		if r.Sessions > 1 {
			state += fmt.Sprintf(" ×%d", r.Sessions)
		}
		if r.State == "stopped" {
			state += ", kept " + r.KeepLeft.String()
		}
		verdict := r.Verdict
		if verdict == "" {
			verdict = "—"
		}
		if r.Verdict != "" && r.Verdict != string(board.VerdictPending) {
			verdict += fmt.Sprintf(" (%+.2f h / %+.2f km) over %s", r.DriftH, r.DriftKm, board.Plural(r.Records, "record"))
		}
		key := shortFingerprint(r.Fingerprint)
		if r.Seat == SeatBrowser {
			key = "—"
		}
		scen := r.Scenario
		if scen == "" {
			scen = "—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.Seat, key, state, r.Uptime, r.Running, r.Crashes, baseline(r), verdict, scen)
	}
	tw.Flush()
}

// baseline says what the lab's usage counts from, read from consumer-usage's
// group: the lab's start (its own group), or the Nth reset-lab (R), which
// gives it the group "…-baseline-N". Another group is shown as it is.
func baseline(r LabRow) string {
	suffix, ok := strings.CutPrefix(r.Group, "demo-usage-"+r.ID)
	switch n, isReset := strings.CutPrefix(suffix, "-baseline-"); {
	case !ok:
		return r.Group
	case suffix == "":
		return "lab start"
	case isReset:
		return "reset #" + n
	}
	return r.Group
}

// shortFingerprint keeps "SHA256:" and 12 characters: enough to tell the
// room's keys apart on a projector.
func shortFingerprint(fp string) string {
	if len(fp) > len("SHA256:")+12 {
		return fp[:len("SHA256:")+12] + "…"
	}
	return fp
}

// scenarioCell says where a lab's scenario is, so the presenter sees who
// is stuck: "replay 2/5 · 1/3 checks", "replay 3/5 · waits for x",
// "replay PASSED 3/3", "replay FAILED 2/3", "replay NOT RUN".
func scenarioCell(p *scenario.Progress) string {
	if p == nil {
		return ""
	}
	passed := 0
	for _, c := range p.Checks {
		if c.Passed {
			passed++
		}
	}
	checks := fmt.Sprintf("%d/%d", passed, len(p.Checks))
	switch {
	case p.NotRun:
		return p.Name + " NOT RUN"
	case p.Done && p.Passed:
		return p.Name + " PASSED " + checks
	case p.Done:
		return p.Name + " FAILED " + checks
	case p.Step == 0:
		return p.Name + " preparing"
	case p.Press != nil:
		return fmt.Sprintf("%s %d/%d · waits for %s", p.Name, p.Step, p.Steps, action.Of(p.Press.Action).Key())
	}
	return fmt.Sprintf("%s %d/%d · %s checks", p.Name, p.Step, p.Steps, checks)
}
