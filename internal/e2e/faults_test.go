package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Faults of the infrastructure under the headless dashboard, checked
// against the topic and the store read independently afterwards.

// brokerBack bounds the time from the broker's return to the producer
// publishing again and consumer-usage having its partitions.
const brokerBack = 10 * time.Second

// TestBrokerOutage kills the broker (SIGKILL) while everything runs in
// guarded mode, keeps it down longer than consumer-usage's session (6 s),
// then starts it again. On the embedded stack the dashboard does both (x,
// r); against a real Apache Kafka (KAFKA_BROKER) the test kills and starts
// the broker of KRL_KAFKA_DIR (scripts/real-kafka.sh) itself.
//
// Then: the producer publishes again and consumer-usage has its partitions
// within 10 s of the broker's return; no process crashed; consumer-current
// counted nothing as invalid (a replayed message is not poison); every
// message the producer had acknowledged is in the topic once, in order per
// sensor; consumer-current's state is the topic's last message of every
// sensor; usage is exact with a drift of 0.
func TestBrokerOutage(t *testing.T) {
	d := newDashboard(t)
	const down = 8 * time.Second
	var kafkaDir string
	script := `
wait-caught-up 60s
wait 2s
crash broker
wait 8s
start broker
wait-caught-up 90s
wait 3s
pause producer
wait-caught-up 60s
quit
`
	if d.external != "" {
		kafkaDir = os.Getenv("KRL_KAFKA_DIR")
		if kafkaDir == "" {
			t.Skip("KAFKA_BROKER without KRL_KAFKA_DIR: the test cannot restart that broker")
		}
		// The test is the one that kills and starts the broker, during the
		// wait; wait-caught-up then holds until everything is back.
		script = `
wait-caught-up 60s
wait 20s
wait-caught-up 120s
wait 3s
pause producer
wait-caught-up 60s
quit
`
	}
	d.startHeadless(script, "--usage-mode", "guarded", "--interval", "100ms", "--seed", "21")

	// Lines from after the outage began are searched; times are measured
	// from the broker being ready again (a client may reconnect before
	// that: the real broker accepts connections during its warm-up).
	var back time.Time
	var after int
	if d.external == "" {
		d.awaitLog("broker crashed", regexp.MustCompile(`broker crashed on request`), 90*time.Second)
		after = len(d.stderr())
		d.awaitLog("broker back", regexp.MustCompile(`broker restarted \(start #2\)(?s:.*)broker listening`), 30*time.Second)
		back = time.Now()
	} else {
		d.awaitLog("the 20 s window", regexp.MustCompile(`script: wait 20s`), 90*time.Second)
		killRealKafka(t, kafkaDir)
		time.Sleep(down) // the outage itself, not a synchronisation
		after = len(d.stderr())
		startRealKafka(t, kafkaDir, d.external)
		back = time.Now()
	}
	awaitAfter := func(what string, re *regexp.Regexp, timeout time.Duration) time.Duration {
		t.Helper()
		AwaitCondition(t, what, timeout, 50*time.Millisecond, func() error {
			if re.MatchString(d.stderr()[after:]) {
				return nil
			}
			return fmt.Errorf("no line matching %q since the outage", re)
		})
		return max(0, time.Since(back))
	}
	tp := awaitAfter("producer publishing again", regexp.MustCompile(`producer connected to kafka`), brokerBack)
	tu := awaitAfter("consumer-usage assigned again", regexp.MustCompile(`consumer-usage (rebalance: )?assigned`), brokerBack)
	t.Logf("after the broker's return: producer publishing within %s, consumer-usage assigned within %s",
		tp.Round(100*time.Millisecond), tu.Round(100*time.Millisecond))

	if code := d.waitExit(4 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	out := d.stderr()
	if n := strings.Count(out, "invalid message"); n > 0 {
		t.Errorf("%d invalid-message events; a replayed message is not poison", n)
	}
	r := d.readReport()
	for _, name := range []string{"producer", "consumer-current", "consumer-usage", "consumer-query"} {
		p := r.proc(t, name)
		if p.State != "running" || p.Crashes != 0 || p.Starts != 1 {
			t.Errorf("%s: %s after %d starts and %d crashes; want running, never restarted", name, p.State, p.Starts, p.Crashes)
		}
		if p.LastError != nil {
			t.Errorf("%s: last_error %q", name, *p.LastError)
		}
	}
	rt := d.readRunTruth()
	checkInOrderOnce(t, rt.Topic, nil)
	if prod := r.proc(t, "producer"); prod.Produced == nil || int(*prod.Produced) != rt.Topic.Count() {
		t.Errorf("producer acknowledged %v messages, the topic holds %d", prod.Produced, rt.Topic.Count())
	}
	checkCurrentIsTruth(t, r, rt.Truth)
	checkUsageExact(t, r, rt)
	t.Logf("%d records over the outage, in order and once each; usage exact for %d sensors", rt.Topic.Count(), len(rt.Expected))
}

// checkInOrderOnce: per sensor, in partition order, timestamps and both
// odometers strictly increase (a duplicate or a reordering breaks it), and
// every record but the injected poison is valid.
func checkInOrderOnce(t *testing.T, tp Topic, poison map[string]Record) {
	t.Helper()
	last := map[string]telemetry.Message{}
	for _, rec := range tp.Records {
		if _, ok := poison[pos(rec.Partition, rec.Offset)]; ok {
			continue
		}
		m, err := telemetry.Decode(rec.Key, rec.Value)
		if err != nil {
			t.Errorf("%d/%d: %v", rec.Partition, rec.Offset, err)
			continue
		}
		if prev, ok := last[m.SensorID]; ok {
			if m.Timestamp <= prev.Timestamp || m.Odometry.HoursTot < prev.Odometry.HoursTot || m.Odometry.KmTot < prev.Odometry.KmTot {
				t.Errorf("%s at %d/%d: %+v after %+v: duplicated or out of order", m.SensorID, rec.Partition, rec.Offset, m, prev)
			}
		}
		last[m.SensorID] = m
	}
}

// TestRedeliveredAtStart: consumer-usage's restart tells how many messages
// it is delivered again. After a kill -9 that is what it had processed
// past its last commit, checked here against the broker's committed
// offsets and the store's checkpoints read while it is down; after a
// graceful stop it is 0, because the stop committed exactly what was
// processed.
func TestRedeliveredAtStart(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
wait 2s
crash consumer-usage
wait 3s
start consumer-usage
wait-caught-up 60s
wait 2s
stop consumer-usage
wait 3s
start consumer-usage
wait-caught-up 60s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "guarded", "--interval", "50ms", "--seed", "22")

	d.awaitLog("the crash", regexp.MustCompile(`consumer-usage crashed on request`), 90*time.Second)
	want := toDeliverAgain(t, d)
	if !stillDown(d) {
		t.Fatal("consumer-usage started again before the offsets were read; the script's wait is too short")
	}

	re := regexp.MustCompile(`consumer-usage resumes [^\n]*? ([\d,]+) messages? delivered again`)
	d.awaitLog("the restart's redelivery event", regexp.MustCompile(`consumer-usage restarted(?s:.*)consumer-usage resumes`), 60*time.Second)
	m := re.FindStringSubmatch(d.stderr()[strings.Index(d.stderr(), "consumer-usage crashed on request"):])
	if m == nil {
		t.Fatalf("no redelivery count after the crash in:\n%s", d.stderr())
	}
	if got, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64); got != want {
		t.Errorf("after kill -9 the dashboard says %d messages delivered again, the committed offsets, checkpoints and records say %d", got, want)
	}

	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	if u := r.proc(t, "consumer-usage"); u.Redelivered == nil || *u.Redelivered != 0 {
		t.Errorf("after a graceful stop, report redelivered = %v, want 0", u.Redelivered)
	}
	if !regexp.MustCompile(`consumer-usage stopped \(exit 0[,)]`).MatchString(d.stderr()) {
		t.Errorf("consumer-usage's graceful stop did not end with exit 0:\n%s", d.stderr())
	}
	rt := d.readRunTruth()
	checkUsageExact(t, r, rt)
}

// stillDown: consumer-usage has not been started again yet.
func stillDown(d *dashboard) bool {
	return !strings.Contains(d.stderr(), "consumer-usage restarted")
}

// killRealKafka SIGKILLs the real broker kept in dir (scripts/real-kafka.sh).
func killRealKafka(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kafka.pid"))
	if err != nil {
		t.Fatalf("real Kafka pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("real Kafka pid %q: %v", b, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill real Kafka %d: %v", pid, err)
	}
	AwaitCondition(t, "real Kafka gone", 10*time.Second, 50*time.Millisecond, func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("pid %d still there", pid)
		}
		return nil
	})
}

// startRealKafka starts the broker of dir again on addr's port and waits
// until it is ready; a failure fails the test (the rest of the suite would
// have no broker).
func startRealKafka(t *testing.T, dir, addr string) {
	t.Helper()
	port := addr[strings.LastIndex(addr, ":")+1:]
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "real-kafka.sh"), "start", dir, port)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The broker outlives the test: it must not carry the run's tag.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, tagEnv+"=") || strings.HasPrefix(kv, "KRL_LOG_ACKS=")
	})
	if err := cmd.Run(); err != nil {
		t.Fatalf("restart real Kafka: %v\n%s", err, out.String())
	}
}

// toDeliverAgain reads, while consumer-usage is down, what its restart
// will be delivered again: per partition, from the committed offset to
// the furthest message processed, by a checkpoint or by a usage record
// past its sensor's checkpoint (processed half-way). An independent
// reading of the broker and the store.
func toDeliverAgain(t *testing.T, d *dashboard) int64 {
	t.Helper()
	brokers, mongo := d.external, ""
	if m := regexp.MustCompile(`broker listening \(kafka\) on (\S+)`).FindStringSubmatch(d.stderr()); brokers == "" && m != nil {
		brokers = m[1]
	}
	if m := regexp.MustCompile(`store listening \(mongo\) on (\S+)`).FindStringSubmatch(d.stderr()); m != nil {
		mongo = "mongodb://" + m[1] + "/krl"
	}
	if brokers == "" || mongo == "" {
		t.Fatalf("addresses not in the event log (broker %q, store %q)", brokers, mongo)
	}
	committed := Committed(t, brokers, d.group, d.topic)
	through := map[int32]int64{}
	for _, cp := range LoadCheckpoints(t, mongo) {
		through[cp.Partition] = max(through[cp.Partition], cp.Offset+1)
	}
	// A kill in the middle of a batch, or between a delta and its
	// checkpoint, leaves records past their checkpoints: those messages
	// were processed too (their effects are written).
	recorded := map[int32]int64{}
	WithStore(t, mongo, func(ctx context.Context, st *store.Store) error {
		cov, err := st.RecordedCoverage(ctx)
		for _, c := range cov {
			for _, f := range c.Furthest {
				recorded[f.Partition] = max(recorded[f.Partition], f.Offset+1)
			}
			if c.Records > 0 {
				recorded[c.Through.Partition] = max(recorded[c.Through.Partition], c.Through.Offset+1)
			}
		}
		return err
	})
	var want int64
	for p, end := range through {
		end = max(end, recorded[p])
		if c, ok := committed[p]; ok && end > c {
			want += end - c
		}
	}
	t.Logf("while consumer-usage is down: committed %v, checkpointed through %v, recorded through %v: %d to deliver again", committed, through, recorded, want)
	return want
}

// TestRedeliveredAfterDelta: a naive crash between the delta and the
// checkpoint; the restart's "delivered again" counts the half-processed
// message, the one whose delta is counted again, as the drift names it.
func TestRedeliveredAfterDelta(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
wait 2s
crash-at consumer-usage after-delta
wait-down consumer-usage 60s
wait 4s
start consumer-usage
wait-caught-up 60s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "naive", "--interval", "50ms", "--seed", "42")

	d.awaitLog("the crash point", regexp.MustCompile(`crash point after-delta reached`), 90*time.Second)
	want := toDeliverAgain(t, d)
	if !stillDown(d) {
		t.Fatal("consumer-usage started again before the offsets were read; the script's wait is too short")
	}
	if want < 1 {
		t.Fatalf("nothing to deliver again after a crash between a delta and its checkpoint")
	}
	d.awaitLog("the restart's redelivery event", regexp.MustCompile(`crash point after-delta reached(?s:.*)consumer-usage resumes`), 60*time.Second)
	after := d.stderr()[strings.Index(d.stderr(), "crash point after-delta reached"):]
	m := regexp.MustCompile(`consumer-usage resumes [^\n]*? ([\d,]+) messages? delivered again`).FindStringSubmatch(after)
	if m == nil {
		t.Fatalf("no redelivery count after the crash in:\n%s", d.stderr())
	}
	got, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if got != want {
		t.Errorf("the dashboard says %d messages delivered again, the committed offsets, checkpoints and records say %d", got, want)
	}
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	r := d.readReport()
	if u := r.proc(t, "consumer-usage"); u.Redelivered == nil || *u.Redelivered != want {
		t.Errorf("report redelivered = %v, want %d", fmtLag(u.Redelivered), want)
	}
	again := r.DriftCausesByKind["counted-again"]
	if again.Messages < 1 || int64(again.Messages) > want {
		t.Errorf("%d messages counted again, %d delivered again: every message counted again was delivered again", again.Messages, want)
	}
	t.Logf("delivered again %d; counted again %d messages (+%.2f h)", want, again.Messages, again.DriftHours)
}
