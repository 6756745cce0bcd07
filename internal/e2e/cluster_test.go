package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// clusterSize is KRL_CLUSTER: the cluster tests need Java 17+, Maven and
// about 1.3 GB for the JVMs, so they run on a pass of their own (.ci/run
// sets KRL_CLUSTER=3); without it they are skipped, saying why.
func clusterSize(t *testing.T) int {
	t.Helper()
	v := os.Getenv("KRL_CLUSTER")
	if v == "" {
		t.Skip("the dashboard's own Apache Kafka cluster: run with KRL_CLUSTER=3 (the cluster pass of .ci/run)")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 {
		t.Fatalf("KRL_CLUSTER=%q: want 3 or more brokers (the test kills two)", v)
	}
	return n
}

// TestClusterFailover runs the dashboard with --cluster 3 (three Apache
// Kafka brokers and a KRaft controller as its children; replication factor
// 3, min.insync.replicas 2; the producer idempotent with acks=all) and
// consumer-usage guarded, and under load:
//  1. kills broker-2 once it leads a partition (the controller gives each
//     broker back its preferred leadership every 10 s): its partitions get
//     new leaders, timed from its exit; publishing and consuming go on with
//     2 of 3;
//  2. kills broker-3 too: one replica in sync, below min.insync.replicas:
//     the producer's writes are refused (NOT_ENOUGH_REPLICAS), it holds
//     them;
//  3. restarts both: the ISR grows back, the held records land.
//
// Then, with the producer paused and everything caught up, the topic is
// read back through the live cluster by a reader of the test's own and
// compared with the producer's acknowledgements (KRL_LOG_ACKS): every
// acknowledged record is in the topic exactly once, every sensor's records
// are in the partition its key hashes to, in order; and the usage the
// store holds is exactly what the topic yields (drift 0).
func TestClusterFailover(t *testing.T) {
	n := clusterSize(t)
	d := newDashboard(t)
	if d.external != "" {
		t.Skip("KAFKA_BROKER is set: the cluster pass runs with the dashboard's own brokers")
	}
	t.Setenv("KRL_LOG_ACKS", "1")
	script := `
wait-isr 3 180s
wait-caught-up 120s
wait-leads broker-2 60s
crash broker-2
wait-isr 2 60s
wait-caught-up 120s
crash broker-3
wait-isr 1 60s
wait-blocked producer 60s
start broker-3
start broker-2
wait-isr 3 120s
wait-balanced 60s
wait-caught-up 120s
pause producer
wait-caught-up 120s
wait 10m
`
	args := []string{"--headless", "--script", writeScript(t, script), "--cluster", strconv.Itoa(n),
		"--usage-mode", "guarded", "--interval", "50ms", "--sensors", "10", "--seed", "2002"}
	d.t.Setenv(tagEnv, d.tag)
	all := append([]string{"--data-dir", d.runDir, "--topic", d.topic, "--mongo=", "--usage-group", d.group, "--report", d.report}, args...)
	d.child = Start(t, Binary(t), all...)
	began := time.Now()
	d.awaitLog("the script reached its hold", regexp.MustCompile(`script: wait 10m0s`), 8*time.Minute)
	t.Logf("script done in %.1f s", time.Since(began).Seconds())
	log := d.stderr()

	// 1. Leadership moved, timed from broker-2's exit.
	moved := regexp.MustCompile(`partition (\d+) leader 2 → (\d+) in ([\d.]+) s after broker-2 exited`).FindAllStringSubmatch(log, -1)
	if len(moved) == 0 {
		t.Fatalf("no partition moved off broker-2 in the events:\n%s", Tail(log, 80))
	}
	for _, m := range moved {
		s, _ := strconv.ParseFloat(m[3], 64)
		t.Logf("partition %s: leader 2 → %s in %.1f s after broker-2's SIGKILL", m[1], m[2], s)
		// The controller fences a silent broker after 5 s (the cluster's
		// broker.session.timeout.ms); the metadata is polled every 0.5 s.
		if s > 15 {
			t.Errorf("partition %s took %.1f s to get a new leader, want under 15 s", m[1], s)
		}
	}
	// 2. Two down: refused with NOT_ENOUGH_REPLICAS, shown as such (the
	// metadata's ISR below the topic's min.insync.replicas), then landed.
	// (librdkafka retries the refused writes; on Apache Kafka 4.1.1 its
	// "msg" debug log named no produce error during the refusal, so the
	// cause comes from the cluster's metadata, see README.)
	if !regexp.MustCompile(`producer (still )?blocked: [\d,]+ buffered[^\n]*NOT_ENOUGH_REPLICAS \(isr 1 < min.insync.replicas 2\)`).MatchString(log) {
		t.Errorf("no \"producer blocked ... NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)\" in the events:\n%s", Tail(log, 80))
	}
	landed := regexp.MustCompile(`producer unblocked after ([\d.]+) s: acknowledgements resume, the ([\d,]+) buffered records? land`).FindAllStringSubmatch(log, -1)
	if len(landed) == 0 {
		t.Errorf("the producer never reported its buffered records landing")
	} else {
		last := landed[len(landed)-1]
		t.Logf("writes refused then landed: blocked %s s, %s records buffered", last[1], last[2])
	}

	// 3. The topic, read through the live cluster, against the acks.
	brokers := regexp.MustCompile(`msg=running brokers=(\S+) mongo=(\S+)`).FindStringSubmatch(log)
	if brokers == nil {
		t.Fatalf("no \"running brokers=... mongo=...\" line in the log")
	}
	// The topic is read at least through every acknowledged offset; if
	// the producer's log shows more acknowledged once read, again.
	var tp Topic
	for attempt := 1; ; attempt++ {
		acked := ackedEnds(t, d)
		t.Logf("acknowledged up to %v (producer log); reading the topic", acked)
		tp = ReadTopicThrough(t, brokers[1], d.topic, acked)
		t.Logf("read %d records, high watermarks %v", tp.Count(), tp.HighWatermarks)
		if after := ackedEnds(t, d); maps.Equal(after, acked) || attempt == 3 {
			break
		} else {
			t.Logf("acknowledged up to %v by then: reading again", after)
		}
	}
	if b, err := os.ReadFile(filepath.Join(d.runDir, "logs", "producer.log")); err == nil {
		if m := regexp.MustCompile(`msg=paused role=producer delivered=\d+ unflushed=\d+`).Find(b); m != nil {
			t.Logf("producer: %s", m)
		}
	}
	uri := brokers[2] + "/krl"
	rt := runTruth{Topic: tp, Truth: LastStates(tp), Checkpoints: LoadCheckpoints(t, uri), Stored: storedTotals(t, uri),
		Mongo: uri, Brokers: brokers[1]}
	rt.Expected = ExpectedUsage(rt.Topic, rt.Checkpoints)
	checkAcked(t, d, tp)
	checkExactlyOnceInOrder(t, d, tp)

	d.child.Signal(syscall.SIGTERM)
	if code := d.waitExit(2 * time.Minute); code != 0 {
		t.Errorf("dashboard exit code %d after SIGTERM", code)
	}
	r := d.readReport()
	checkUsageExact(t, r, rt)
	checkReportKeys(t, r, tp)
	if len(r.Partitions) != Partitions {
		t.Errorf("report has %d partitions, want %d", len(r.Partitions), Partitions)
	}
	for _, p := range r.Partitions {
		if len(p.Replicas) != n || len(p.ISR) != n || p.Leader < 1 {
			t.Errorf("report partition %d: leader %d replicas %v isr %v, want %d replicas all in sync", p.Partition, p.Leader, p.Replicas, p.ISR, n)
		}
		if p.HighWatermark == nil || *p.HighWatermark != tp.HighWatermarks[p.Partition] {
			t.Errorf("report partition %d high watermark %v, the topic's %d", p.Partition, p.HighWatermark, tp.HighWatermarks[p.Partition])
		}
		for _, s := range p.Sensors {
			if got := kafkacfg.PartitionFor(s, Partitions); got != p.Partition {
				t.Errorf("report puts %s in partition %d, its key hashes to %d", s, p.Partition, got)
			}
		}
	}
	awaitNoProcesses(t, d.tag, nil, 30*time.Second)
}

// checkExactlyOnceInOrder: every acknowledged (sensor, timestamp) is in the
// topic exactly once, every sensor's records are in the partition its key
// hashes to, and their timestamps rise with the offset.
func checkExactlyOnceInOrder(t *testing.T, d *dashboard, tp Topic) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.runDir, "logs", "producer.log"))
	if err != nil {
		t.Fatalf("producer log: %v", err)
	}
	acked := map[string]bool{}
	for _, m := range regexp.MustCompile(`msg=acked role=producer sensor=(\S+) ts=(\d+)`).FindAllStringSubmatch(string(b), -1) {
		acked[m[1]+"@"+m[2]] = true
	}
	seen := map[string]int{}
	last := map[string]int64{}
	misplaced, disordered := 0, 0
	for _, r := range tp.Records {
		msg, err := telemetry.Decode(r.Key, r.Value)
		if err != nil {
			continue
		}
		seen[fmt.Sprintf("%s@%d", msg.SensorID, msg.Timestamp)]++
		if want := kafkacfg.PartitionFor(msg.SensorID, len(tp.HighWatermarks)); want != r.Partition {
			misplaced++
			if misplaced <= 3 {
				t.Errorf("%s at %d/%d: its key hashes to partition %d", msg.SensorID, r.Partition, r.Offset, want)
			}
		}
		if prev, ok := last[msg.SensorID]; ok && msg.Timestamp <= prev {
			disordered++
			if disordered <= 3 {
				t.Errorf("%s at %d/%d: timestamp %d after %d (order per key broken)", msg.SensorID, r.Partition, r.Offset, msg.Timestamp, prev)
			}
		}
		last[msg.SensorID] = msg.Timestamp
	}
	dup := 0
	for k, c := range seen {
		if c > 1 {
			dup++
			if dup <= 3 {
				t.Errorf("%s is in the topic %d times", k, c)
			}
		}
	}
	missing := 0
	for k := range acked {
		if seen[k] != 1 {
			missing++
		}
	}
	if len(acked) == 0 {
		t.Fatal("no ack logged")
	}
	if missing > 0 || dup > 0 || misplaced > 0 || disordered > 0 {
		t.Errorf("%d acknowledged records not in the topic exactly once, %d duplicated, %d misplaced, %d out of order",
			missing, dup, misplaced, disordered)
	}
	t.Logf("%d acknowledged records, each in the topic exactly once; %d records in %d partitions, every key in its partition, in order",
		len(acked), tp.Count(), len(tp.HighWatermarks))
}

func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.krl")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
