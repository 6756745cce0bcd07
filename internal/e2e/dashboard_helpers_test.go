package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// The dashboard under test: the built binary with no subcommand, run as a
// real process (headless, or in tmux for the terminal UI).
//
// Every process of a run carries the environment variable tagEnv=<unique
// tag>: children inherit the dashboard's environment, so scanning /proc
// for the tag finds every descendant, however it was started, and proves
// none is left once the dashboard is gone.

const tagEnv = "KRL_E2E_TAG"

// dashboard is one run of the dashboard: its run directory, topic and
// infrastructure. With KAFKA_BROKER it uses that broker with a topic of its
// own (created here, 3 partitions) and its own consumer-usage group; without
// it the dashboard starts its embedded broker. The store is always the
// dashboard's embedded one.
type dashboard struct {
	t      *testing.T
	tag    string
	runDir string
	topic  string
	group  string
	// external is the broker named by KAFKA_BROKER ("" = embedded).
	external string
	report   string
	child    *Child
}

func newDashboard(t *testing.T) *dashboard {
	t.Helper()
	Binary(t)
	suffix := RandomSuffix()
	d := &dashboard{
		t:        t,
		tag:      "krl-e2e-" + suffix,
		runDir:   filepath.Join(t.TempDir(), "run"),
		topic:    "sensor-data-" + suffix,
		group:    "demo-usage-e2e-" + suffix,
		external: os.Getenv("KAFKA_BROKER"),
		report:   filepath.Join(t.TempDir(), "report.json"),
	}
	if d.external != "" {
		// Unreachable broker: CreateTopic fails the test.
		CreateTopic(t, d.external, d.topic, Partitions)
		t.Cleanup(func() {
			deleteTopic(t, d.external, d.topic)
			deleteTopic(t, d.external, kafkacfg.DeadLetterTopic(d.topic))
			deleteTopic(t, d.external, kafkacfg.ChangelogTopic(d.topic))
		})
		t.Logf("dashboard on KAFKA_BROKER=%s, topic %s", d.external, d.topic)
	} else {
		// The test's own flags say whether it is the embedded broker or
		// --cluster N (the cluster tests log their cluster).
		t.Logf("dashboard with a broker of its own, topic %s", d.topic)
	}
	t.Cleanup(func() {
		if t.Failed() {
			d.dumpLogs()
		}
	})
	return d
}

// args are the dashboard's flags for this run, then extra.
func (d *dashboard) args(extra ...string) []string {
	a := []string{"--data-dir", d.runDir, "--topic", d.topic, "--mongo=", "--usage-group", d.group, "--report", d.report}
	if d.external != "" {
		a = append(a, "--brokers", d.external)
	} else {
		a = append(a, "--brokers=")
	}
	return append(a, extra...)
}

// startHeadless runs the dashboard headless with script (none if "").
func (d *dashboard) startHeadless(script string, extra ...string) *Child {
	d.t.Helper()
	args := append([]string{"--headless"}, extra...)
	if script != "" {
		path := filepath.Join(d.t.TempDir(), "script.krl")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			d.t.Fatal(err)
		}
		args = append(args, "--script", path)
	}
	// The tag is inherited by the dashboard, hence by all its children.
	d.child = StartEnv(d.t, []string{tagEnv + "=" + d.tag}, Binary(d.t), d.args(args...)...)
	return d.child
}

// stderr is everything the headless dashboard printed (its event log).
func (d *dashboard) stderr() string { return d.child.StderrTail(1 << 30) }

// awaitLog waits until the headless dashboard printed a line matching re.
func (d *dashboard) awaitLog(what string, re *regexp.Regexp, timeout time.Duration) {
	d.t.Helper()
	AwaitCondition(d.t, what, timeout, 50*time.Millisecond, func() error {
		if re.MatchString(d.stderr()) {
			return nil
		}
		if done, code := d.child.Exited(); done {
			d.t.Fatalf("%s: the dashboard exited (code %d) first", what, code)
		}
		return fmt.Errorf("no line matching %q yet", re)
	})
}

// waitExit waits for the headless dashboard to end on its own and returns
// its exit code.
func (d *dashboard) waitExit(timeout time.Duration) int {
	d.t.Helper()
	code, ok := d.child.WaitExit(timeout)
	if !ok {
		d.t.Fatalf("the dashboard did not exit within %s", timeout)
	}
	return code
}

func (d *dashboard) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(d.runDir, "logs", "*.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 25 {
			lines = lines[len(lines)-25:]
		}
		d.t.Logf("--- %s (last lines):\n%s", f, strings.Join(lines, "\n"))
	}
}

// The report as its contract defines it, declared here rather than imported:
// a report drifting from the contract fails these tests.
type dashReport struct {
	Brokers    string       `json:"brokers"`
	Mongo      string       `json:"mongo"`
	Processes  []reportProc `json:"processes"`
	Sensors    []reportSens `json:"sensors"`
	Partitions []reportPart `json:"partitions"`
	Keys       *reportKeys  `json:"keys"`
	// DriftCausesByKind sums the sensors' drift_causes per kind.
	DriftCausesByKind map[string]struct {
		Messages   int     `json:"messages"`
		DriftHours float64 `json:"drift_hours"`
		DriftKm    float64 `json:"drift_km"`
	} `json:"drift_causes_by_kind"`
}

// reportCause is one message of a sensor's drift.
type reportCause struct {
	Kind          string  `json:"kind"`
	Partition     int32   `json:"partition"`
	Offset        int64   `json:"offset"`
	Writer        string  `json:"writer"`
	Records       int     `json:"records"`
	RecordedHours float64 `json:"recorded_hours"`
	RecordedKm    float64 `json:"recorded_km"`
	ExpectedHours float64 `json:"expected_hours"`
	ExpectedKm    float64 `json:"expected_km"`
	Inferred      bool    `json:"inferred"`
}

// reportKeys is the partitions view's keys line: the audit's read of the
// topic against the partitioner.
type reportKeys struct {
	Sensors    int             `json:"sensors"`
	Records    int64           `json:"records"`
	Disordered int64           `json:"disordered"`
	Scattered  []string        `json:"scattered"`
	Through    map[int32]int64 `json:"through"`
}

// reportPart is one entry of the report's partitions.
type reportPart struct {
	Partition     int32    `json:"partition"`
	Leader        int32    `json:"leader"`
	Replicas      []int32  `json:"replicas"`
	ISR           []int32  `json:"isr"`
	HighWatermark *int64   `json:"high_watermark"`
	Sensors       []string `json:"sensors"`
}

type reportProc struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	PID      int    `json:"pid"`
	Starts   int    `json:"starts"`
	Crashes  int    `json:"crashes"`
	Lag      *int64 `json:"lag"`
	Mode     string `json:"mode"`
	Reset    string `json:"reset"`
	LastExit string `json:"last_exit"`
	// LastError is null when the process gave no reason for failing.
	LastError   *string `json:"last_error"`
	Redelivered *int64  `json:"redelivered"`
	Produced    *int64  `json:"produced"`
	Health      string  `json:"health"` // ok, stuck, down or frozen
	// Invalid is null for processes that read no messages.
	Invalid     *int64 `json:"invalid"`
	LastInvalid string `json:"last_invalid"`
	// Every consumer-usage instance: the partitions it owns now (a list,
	// possibly empty; absent for the other processes), second effects
	// prevented and late writes.
	Partitions *[]int32 `json:"partitions"`
	Prevented  *int64   `json:"prevented"`
	Late       *int64   `json:"late"`
}

type reportSens struct {
	SensorID string `json:"sensor_id"`
	Current  *struct {
		Timestamp int64   `json:"timestamp"`
		HoursTot  float64 `json:"hours_tot"`
		KmTot     float64 `json:"km_tot"`
		Lat       float64 `json:"lat"`
		Lon       float64 `json:"lon"`
	} `json:"current"`
	Usage *struct {
		Hours   float64 `json:"hours"`
		Km      float64 `json:"km"`
		Records int64   `json:"records"`
	} `json:"usage"`
	Truth *struct {
		Timestamp  int64   `json:"timestamp"`
		HoursTot   float64 `json:"hours_tot"`
		KmTot      float64 `json:"km_tot"`
		UsageHours float64 `json:"usage_hours"`
		UsageKm    float64 `json:"usage_km"`
	} `json:"truth"`
	Drift *struct {
		Hours float64 `json:"hours"`
		Km    float64 `json:"km"`
	} `json:"drift"`
	DriftCauses []reportCause `json:"drift_causes"`
	Verdict     string        `json:"verdict"`
}

func (d *dashboard) readReport() dashReport {
	d.t.Helper()
	b, err := os.ReadFile(d.report)
	if err != nil {
		d.t.Fatalf("report: %v", err)
	}
	var r dashReport
	if err := json.Unmarshal(b, &r); err != nil {
		d.t.Fatalf("report is not the JSON of the contract: %v\n%s", err, b)
	}
	return r
}

func (r dashReport) proc(t *testing.T, name string) reportProc {
	t.Helper()
	for _, p := range r.Processes {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("report has no process %s: %+v", name, r.Processes)
	return reportProc{}
}

// runTruth is what the run left behind, read independently after the
// dashboard ended: every record of the topic, consumer-usage's checkpoints
// and the usage totals in the store.
type runTruth struct {
	Topic       Topic
	Truth       Truth
	Checkpoints map[string]store.Checkpoint
	Stored      map[string]store.Totals
	Expected    map[string]store.Totals
	Mongo       string
	// Brokers is where the topic was read (the run's broker reopened).
	Brokers string
}

// readRunTruth reopens what the dashboard used: the external broker, or its
// embedded broker's data directory with a broker of our own; its embedded
// store's data directory with a store of our own.
func (d *dashboard) readRunTruth() runTruth {
	d.t.Helper()
	// A headless child must have exited; a tmux run's caller waited for
	// the wrapper's exit line.
	if d.child != nil {
		if done, _ := d.child.Exited(); !done {
			d.t.Fatalf("readRunTruth while the dashboard still runs")
		}
	}
	brokers := d.external
	if brokers == "" {
		b := Start(d.t, Binary(d.t), "broker", "--data-dir", filepath.Join(d.runDir, "broker"),
			"--listen", "127.0.0.1:0", "--topic", d.topic)
		brokers = b.Listening("kafka", 30*time.Second)
	}
	st := Start(d.t, Binary(d.t), "store", "--data-dir", filepath.Join(d.runDir, "store"), "--listen", "127.0.0.1:0")
	uri := "mongodb://" + st.Listening("mongo", 30*time.Second) + "/krl"

	var rt runTruth
	rt.Mongo, rt.Brokers = uri, brokers
	rt.Topic = ReadTopic(d.t, brokers, d.topic)
	rt.Truth = LastStates(rt.Topic)
	rt.Checkpoints = LoadCheckpoints(d.t, uri)
	rt.Stored = storedTotals(d.t, uri)
	rt.Expected = ExpectedUsage(rt.Topic, rt.Checkpoints)
	return rt
}

func storedTotals(t testing.TB, uri string) (tot map[string]store.Totals) {
	t.Helper()
	WithStore(t, uri, func(ctx context.Context, st *store.Store) (err error) {
		tot, err = st.UsageTotals(ctx)
		return err
	})
	return tot
}

// checkCurrentIsTruth: every sensor's current in the report is the topic's
// last valid message of it, exactly.
func checkCurrentIsTruth(t *testing.T, r dashReport, tr Truth) {
	t.Helper()
	seen := 0
	for _, s := range r.Sensors {
		w, ok := tr.Sensors[s.SensorID]
		if !ok {
			t.Errorf("report has sensor %s, the topic has no valid message of it", s.SensorID)
			continue
		}
		seen++
		m := w.Message
		if s.Current == nil {
			t.Errorf("%s: report current is null, the topic's last message is %+v", s.SensorID, m)
			continue
		}
		got := telemetry.Message{SensorID: s.SensorID, Timestamp: s.Current.Timestamp,
			Odometry: telemetry.Odometry{HoursTot: s.Current.HoursTot, KmTot: s.Current.KmTot},
			Position: telemetry.Position{Lat: s.Current.Lat, Lon: s.Current.Lon}}
		if got != m {
			t.Errorf("%s: report current %+v, the topic's last valid message %+v (offset %d/%d)",
				s.SensorID, got, m, w.Partition, w.Offset)
		}
		if s.Truth == nil || s.Truth.Timestamp != m.Timestamp || s.Truth.HoursTot != m.Odometry.HoursTot || s.Truth.KmTot != m.Odometry.KmTot {
			t.Errorf("%s: report truth %+v, the topic's last valid message %+v", s.SensorID, s.Truth, m)
		}
	}
	if seen != len(tr.Sensors) {
		t.Errorf("report lists %d of the topic's %d sensors", seen, len(tr.Sensors))
	}
}

// reportUsage is the report's usage of a sensor in cents (zero when null).
func reportUsage(s reportSens) (store.Totals, bool) {
	if s.Usage == nil {
		return store.Totals{}, false
	}
	return store.Totals{HoursCents: store.Cents(s.Usage.Hours), KmCents: store.Cents(s.Usage.Km), Records: s.Usage.Records}, true
}

func reportDrift(s reportSens) (hours, km int64, ok bool) {
	if s.Drift == nil {
		return 0, 0, false
	}
	return store.Cents(s.Drift.Hours), store.Cents(s.Drift.Km), true
}

// checkUsageExact: the store holds exactly the usage the topic yields over
// each sensor's checkpointed window, the report says the same, and its
// drift is exactly 0 everywhere.
func checkUsageExact(t *testing.T, r dashReport, rt runTruth) {
	t.Helper()
	var all store.Totals
	for id, want := range rt.Expected {
		all.HoursCents += want.HoursCents
		all.KmCents += want.KmCents
		all.Records += want.Records
		if got := rt.Stored[id]; got != want {
			t.Errorf("%s: the store holds %+v, the topic yields %+v (cents)", id, got, want)
			if got.Records != want.Records {
				missingRecords(t, rt, id)
			}
		}
	}
	for id, got := range rt.Stored {
		if _, ok := rt.Expected[id]; !ok && got != (store.Totals{}) {
			t.Errorf("%s: the store holds %+v for a sensor without a checkpoint", id, got)
		}
	}
	if all.Records == 0 {
		t.Fatalf("no usage expected at all: nothing was checked")
	}
	if len(r.Sensors) != len(rt.Truth.Sensors) {
		t.Errorf("report has %d sensors, the topic %d", len(r.Sensors), len(rt.Truth.Sensors))
	}
	for _, s := range r.Sensors {
		want := rt.Expected[s.SensorID]
		got, ok := reportUsage(s)
		if !ok || got != want {
			t.Errorf("%s: report usage %+v (present %v), the topic yields %+v (cents)", s.SensorID, got, ok, want)
		}
		if s.Truth == nil || store.Cents(s.Truth.UsageHours) != want.HoursCents || store.Cents(s.Truth.UsageKm) != want.KmCents {
			t.Errorf("%s: report truth %+v, independent expected usage %+v (cents)", s.SensorID, s.Truth, want)
		}
		if h, k, ok := reportDrift(s); !ok || h != 0 || k != 0 {
			t.Errorf("%s: report drift %+v, want exactly 0", s.SensorID, s.Drift)
		}
	}
	if n := checkDriftCauses(t, r, rt); n != 0 {
		t.Errorf("%d drift causes in an exact run", n)
	}
}

// checkNoCauseAtAnyPoll: a guarded run's timeline never named a drift's
// cause and never failed to (the board notes every new group of causes,
// at the poll it appears).
func checkNoCauseAtAnyPoll(t *testing.T, d *dashboard) {
	t.Helper()
	for _, line := range strings.Split(d.stderr(), "\n") {
		if strings.Contains(line, "drift named: ") || strings.Contains(line, "cannot name the drift's messages") {
			t.Errorf("a guarded run's timeline: %s", line)
		}
	}
}

// messageDeltas is, per sensor, what the topic yields for each of its
// messages in its checkpointed window (after the first checkpoint, in its
// partition), in cents: the seed's rule between consecutive valid messages.
func messageDeltas(tp Topic, checkpoints map[string]store.Checkpoint) map[string]map[int64]store.Totals {
	out := map[string]map[int64]store.Totals{}
	prev := map[string]telemetry.Message{}
	for _, r := range tp.Records {
		m, err := telemetry.Decode(r.Key, r.Value)
		if err != nil {
			continue
		}
		cp, ok := checkpoints[m.SensorID]
		if !ok || r.Partition != cp.FirstPartition {
			continue
		}
		p, had := prev[m.SensorID]
		if had && (m.Odometry.HoursTot < p.Odometry.HoursTot || m.Odometry.KmTot < p.Odometry.KmTot) {
			continue // not a reading
		}
		prev[m.SensorID] = m
		if !had || r.Offset <= cp.FirstOffset {
			continue
		}
		dh, dk := cents(m.Odometry.HoursTot)-cents(p.Odometry.HoursTot), cents(m.Odometry.KmTot)-cents(p.Odometry.KmTot)
		if out[m.SensorID] == nil {
			out[m.SensorID] = map[int64]store.Totals{}
		}
		if dh > 0 || dk > 0 {
			out[m.SensorID][r.Offset] = store.Totals{HoursCents: dh, KmCents: dk, Records: 1}
		}
	}
	return out
}

// checkDriftCauses: every sensor's drift_causes add up to its drift to the
// cent, each names a message whose expected delta is the topic's (read
// back independently; nothing is expected of a message at or before the
// first checkpoint), each kind is a documented one, and the total by kind
// sums them. It returns how many causes the report names.
func checkDriftCauses(t *testing.T, r dashReport, rt runTruth) int {
	t.Helper()
	deltas := messageDeltas(rt.Topic, rt.Checkpoints)
	kinds := map[string][3]int64{}
	n := 0
	for _, s := range r.Sensors {
		if s.DriftCauses == nil {
			t.Errorf("%s: no drift_causes in the report (want a list, [] when none)", s.SensorID)
		}
		var h, k int64
		for _, c := range s.DriftCauses {
			n++
			rh, rk := store.Cents(c.RecordedHours), store.Cents(c.RecordedKm)
			eh, ek := store.Cents(c.ExpectedHours), store.Cents(c.ExpectedKm)
			h, k = h+rh-eh, k+rk-ek
			if want := deltas[s.SensorID][c.Offset]; c.Partition != rt.Checkpoints[s.SensorID].FirstPartition ||
				eh != want.HoursCents || ek != want.KmCents {
				t.Errorf("%s: cause %+v expects %d/%d cents, the topic yields %+v for p%d@%d",
					s.SensorID, c, eh, ek, want, c.Partition, c.Offset)
			}
			if rh == eh && rk == ek {
				t.Errorf("%s: cause %+v is recorded as the topic yields it", s.SensorID, c)
			}
			switch {
			case c.Kind == "never-recorded" && c.Records == 0,
				c.Kind == "counted-again" && c.Records > 1,
				c.Kind == "stale-reading" && c.Records == 1:
			default:
				t.Errorf("%s: cause %+v: kind and records disagree (or the kind is undocumented)", s.SensorID, c)
			}
			kk := kinds[c.Kind]
			kinds[c.Kind] = [3]int64{kk[0] + 1, kk[1] + rh - eh, kk[2] + rk - ek}
		}
		dh, dk, ok := reportDrift(s)
		if !ok && len(s.DriftCauses) > 0 {
			t.Errorf("%s: causes %+v without a drift", s.SensorID, s.DriftCauses)
		}
		if ok && (h != dh || k != dk) {
			t.Errorf("%s: causes sum to %d/%d cents, the drift is %d/%d: %+v", s.SensorID, h, k, dh, dk, s.DriftCauses)
		}
	}
	if len(r.DriftCausesByKind) != len(kinds) {
		t.Errorf("drift_causes_by_kind %+v, the sensors' causes give %v", r.DriftCausesByKind, kinds)
	}
	for kind, want := range kinds {
		got := r.DriftCausesByKind[kind]
		if int64(got.Messages) != want[0] || store.Cents(got.DriftHours) != want[1] || store.Cents(got.DriftKm) != want[2] {
			t.Errorf("drift_causes_by_kind[%s] %+v, the sensors' causes give %v", kind, got, want)
		}
	}
	return n
}

// checkProcesses compares the report's process table with what the script
// did: want[name] = {starts, crashes}; every process runs, and both
// consumers end with a lag of exactly 0.
func checkProcesses(t *testing.T, r dashReport, d *dashboard, want map[string][2]int) {
	t.Helper()
	names := []string{"producer", "consumer-current", "consumer-usage", "consumer-query", "store"}
	if d.external == "" {
		names = append(names, "broker")
	}
	if len(r.Processes) != len(names) {
		t.Errorf("report lists %d processes, want %d (%v): %+v", len(r.Processes), len(names), names, r.Processes)
	}
	for _, n := range names {
		p := r.proc(t, n)
		w, ok := want[n]
		if !ok {
			w = [2]int{1, 0}
		}
		if p.State != "running" || p.PID <= 0 || p.Starts != w[0] || p.Crashes != w[1] {
			t.Errorf("%s: state %q pid %d starts %d crashes %d; want running, starts %d, crashes %d",
				n, p.State, p.PID, p.Starts, p.Crashes, w[0], w[1])
		}
		if w[1] > 0 && p.LastExit != "SIGKILL" {
			t.Errorf("%s: last exit %q, want SIGKILL", n, p.LastExit)
		}
		switch n {
		case "consumer-current", "consumer-usage":
			if p.Lag == nil || *p.Lag != 0 {
				t.Errorf("%s: lag %v at the end, want 0", n, fmtLag(p.Lag))
			}
		default:
			if p.Lag != nil {
				t.Errorf("%s: lag %d, want null (no Kafka lag)", n, *p.Lag)
			}
		}
	}
}

func fmtLag(l *int64) string {
	if l == nil {
		return "null"
	}
	return strconv.FormatInt(*l, 10)
}

// ---- processes of a run, found by their environment ----

// taggedProcs returns the live processes (pid -> command line) whose
// environment holds tagEnv=tag. Zombies have no readable environment and
// are not counted: they hold no resources and are reaped by their parent.
func taggedProcs(tag string) map[int]string {
	want := []byte(tagEnv + "=" + tag)
	out := map[int]string{}
	dirs, _ := os.ReadDir("/proc")
	for _, e := range dirs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				out[pid] = strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
				break
			}
		}
	}
	return out
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// awaitNoProcesses waits until no process of the run is left: none tagged,
// and none of pids (collected while it ran) alive.
func awaitNoProcesses(t *testing.T, tag string, pids []int, timeout time.Duration) {
	t.Helper()
	AwaitCondition(t, "no process of the run left", timeout, 50*time.Millisecond, func() error {
		left := taggedProcs(tag)
		for _, pid := range pids {
			if _, ok := left[pid]; !ok && alive(pid) {
				left[pid] = "(collected pid, still alive)"
			}
		}
		if len(left) == 0 {
			return nil
		}
		var b strings.Builder
		for _, pid := range sortedKeys(left) {
			fmt.Fprintf(&b, "\n  pid %d: %s", pid, left[pid])
		}
		return fmt.Errorf("%d left:%s", len(left), b.String())
	})
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// childPIDsFromLogs collects every pid the supervisor started in this run,
// from the "=== ... started pid N: ... ===" lines of the run's logs.
func childPIDsFromLogs(t *testing.T, runDir string) []int {
	t.Helper()
	re := regexp.MustCompile(`=== [0-9-]+ [0-9:.]+ started pid (\d+):`)
	logs, _ := filepath.Glob(filepath.Join(runDir, "logs", "*.log"))
	var pids []int
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			pid, _ := strconv.Atoi(string(m[1]))
			pids = append(pids, pid)
		}
	}
	return pids
}

// missingRecords names the messages of a sensor that should have a usage
// record and have none (or the reverse), with their timestamps, so a count
// mismatch says when it happened.
func missingRecords(t *testing.T, rt runTruth, id string) {
	t.Helper()
	var have map[string][]store.RecordSource
	WithStore(t, rt.Mongo, func(ctx context.Context, st *store.Store) (err error) {
		have, err = st.UsageOffsets(ctx)
		return err
	})
	stored := map[store.Position]bool{}
	for _, p := range have[id] {
		stored[p.Position] = true
	}
	var missing []string
	for _, r := range ExpectedRecords(rt.Topic, rt.Checkpoints)[id] {
		at := store.Position{Partition: r.Partition, Offset: r.Offset}
		if stored[at] {
			delete(stored, at)
			continue
		}
		m, _ := telemetry.Decode(r.Key, r.Value)
		missing = append(missing, fmt.Sprintf("%d/%d (ts %s)", r.Partition, r.Offset, time.UnixMilli(m.Timestamp).UTC().Format("15:04:05.000")))
	}
	extra := make([]string, 0, len(stored))
	for p := range stored {
		extra = append(extra, fmt.Sprintf("%d/%d", p.Partition, p.Offset))
	}
	t.Errorf("%s: no usage record for %v; records the topic does not call for: %v", id, missing, extra)
}

// checkReportKeys compares the partitions view's keys line (the report's
// keys) with the topic read independently: up to where the audit had
// read, the valid records (LastStates' rule), the sensors they belong to,
// none out of order per key and none outside its key's partition.
func checkReportKeys(t *testing.T, r dashReport, tp Topic) {
	t.Helper()
	k := r.Keys
	if k == nil {
		t.Error("report has no keys: the audit never read the topic")
		return
	}
	upTo := Topic{HighWatermarks: tp.HighWatermarks}
	for _, rec := range tp.Records {
		if rec.Offset < k.Through[rec.Partition] {
			upTo.Records = append(upTo.Records, rec)
		}
	}
	truth := LastStates(upTo)
	records := int64(len(upTo.Records) - truth.Invalid)
	if k.Records != records || k.Sensors != len(truth.Sensors) || k.Disordered != 0 || len(k.Scattered) != 0 {
		t.Errorf("keys line: %d sensors, %d records, %d out of order, scattered %v; the topic through %v: %d sensors, %d valid records, each key in its partition, in order",
			k.Sensors, k.Records, k.Disordered, k.Scattered, k.Through, len(truth.Sensors), records)
		return
	}
	t.Logf("keys line: %d sensors, %d records, 0 out of order, as the topic through %v", k.Sensors, k.Records, k.Through)
}
