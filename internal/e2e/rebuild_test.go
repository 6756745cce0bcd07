package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/producer"
)

// TestRebuildStrategiesAfterKills: for each rebuild strategy,
// consumer-current is SIGKILLed at random moments while the producer
// publishes, poison among its records, and started again; with the
// snapshot strategy every other kill comes from inside a snapshot write
// (its mid-snapshot crash point: half of the new file written, not yet in
// the old one's place). The first incarnation is killed only after its
// first save, so every start rebuilds from one: none may fall back to a
// replay. After the last start the rebuilt state equals the topic read
// back independently: every sensor's last valid message.
// KRL_REBUILD_SEED replays a run's kill moments.
func TestRebuildStrategiesAfterKills(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KRL_REBUILD_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRL_REBUILD_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (KRL_REBUILD_SEED=%d replays it)", seed, seed)
	for i, s := range []string{"replay", "snapshot", "changelog"} {
		t.Run(s, func(t *testing.T) {
			rebuildAfterKills(t, s, rand.New(rand.NewPCG(seed, uint64(i))))
		})
	}
}

// killRounds is how many times each strategy's consumer-current is killed.
const killRounds = 8

func rebuildAfterKills(t *testing.T, strategy string, rng *rand.Rand) {
	in := Stack(t)
	args := []string{"consumer", "current", "--rebuild", strategy, "--snapshot", filepath.Join(t.TempDir(), "consumer-current.snapshot")}
	// 10 sensors every 20 ms: 500 messages a second.
	prod := in.Role(t, "producer", "--interval", "20ms", "--seed", "31")
	prodURL := prod.URL(60 * time.Second)
	cur := in.Role(t, args...)
	saved := false // a start before the first save may fall back
	for round := range killRounds {
		cur.Await("rebuild announced", isType(status.Rebuild), 60*time.Second)
		if round == 0 && strategy != "replay" {
			cur.Await("the first save", isType(status.Prepared), 60*time.Second)
		}
		// A random moment: during the rebuild, or after it.
		time.Sleep(time.Duration(100+rng.IntN(2400)) * time.Millisecond) // the kill's moment, not a wait for a condition
		if round%3 == 1 {
			injectHTTP(t, prodURL, producer.BadCycle)
		}
		if strategy == "snapshot" && round%2 == 1 {
			killInSnapshotWrite(t, cur)
		} else {
			cur.Kill()
		}
		saved = saved || hasEvent(cur, status.Prepared)
		cur = in.Role(t, args...)
		ev := cur.Await("rebuild announced", isType(status.Rebuild), 60*time.Second)
		switch {
		case ev.Strategy != strategy:
			t.Fatalf("round %d: started with %q, want %q", round, ev.Strategy, strategy)
		case strategy != "replay" && ev.Reason != "" && saved:
			t.Fatalf("round %d: fell back to a replay after a %s was saved: %s", round, strategy, ev.Reason)
		case strategy == "changelog" && ev.Reason == "" && (ev.Marks < 1 || ev.Count-ev.Marks < int64(ev.Sensors)):
			// Every sensor restored has its value among the records read,
			// and a publication ends with its mark.
			t.Fatalf("round %d: read %d changelog records, %d of them marks, for %d sensors", round, ev.Count, ev.Marks, ev.Sensors)
		}
		t.Logf("round %d: %s", round, rebuildWords(ev))
	}
	pauseProducer(t, prod)
	tp := ReadTopic(t, in.Brokers, in.Topic)
	truth := LastStates(tp)
	if truth.Invalid == 0 || len(truth.Sensors) != 10 {
		t.Fatalf("the topic holds %d invalid records and %d sensors: want poison among 10 sensors", truth.Invalid, len(truth.Sensors))
	}
	awaitStateIs(t, cur.URL(30*time.Second), tp, truth)
	if !saved && strategy != "replay" {
		t.Fatalf("no %s was ever saved", strategy)
	}
	ev := cur.Await("caught up", isType(status.CaughtUp), 60*time.Second)
	t.Logf("%d records in the topic (%d invalid); the last start read %d of its %d records in %d ms",
		tp.Count(), truth.Invalid, ev.Processed, ev.History, ev.Millis)
}

// killInSnapshotWrite arms consumer-current's mid-snapshot crash point and
// waits for the process to kill itself inside its next snapshot write.
func killInSnapshotWrite(t *testing.T, cur *Child) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cur.URL(10*time.Second)+"/crash-at?point=mid-snapshot", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /crash-at: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /crash-at: %s", resp.Status)
	}
	cur.Await("crash point reached in a snapshot write", isType(status.CrashPoint), 30*time.Second)
	if _, exited := cur.WaitExit(10 * time.Second); !exited {
		t.Fatal("consumer-current did not die at its crash point")
	}
}

func hasEvent(c *Child, tp status.Type) bool {
	for _, e := range c.Events() {
		if e.Type == tp {
			return true
		}
	}
	return false
}

func rebuildWords(ev status.Event) string {
	switch {
	case ev.Reason != "":
		return "fell back to a replay: " + ev.Reason
	case ev.Strategy == "snapshot":
		return fmt.Sprintf("snapshot of %s, %d sensors, from %v", ev.SnapshotAt.Format("15:04:05.000"), ev.Sensors, ev.Positions)
	case ev.Strategy == "changelog":
		return fmt.Sprintf("changelog of %d records (%d marks), %d sensors, from %v", ev.Count, ev.Marks, ev.Sensors, ev.Positions)
	}
	return "replay from " + fmt.Sprint(ev.Positions)
}

// awaitStateIs waits until consumer-current's /state is caught up, at the
// high watermarks, with every sensor's last valid message of tp.
func awaitStateIs(t *testing.T, baseURL string, tp Topic, truth Truth) {
	t.Helper()
	AwaitCondition(t, "consumer-current /state equals the topic read independently", 60*time.Second, 100*time.Millisecond, func() error {
		var got StateBody
		code, err := GetJSON(baseURL+"/state", &got)
		switch {
		case err != nil:
			return err
		case code != 200:
			return fmt.Errorf("/state answered %d", code)
		case !got.CaughtUp:
			return fmt.Errorf("not caught up")
		}
		for _, p := range got.Positions {
			if hw := tp.HighWatermarks[p.Partition]; p.Offset != hw {
				return fmt.Errorf("partition %d at %d, topic hwm %d", p.Partition, p.Offset, hw)
			}
		}
		return CompareState(got, truth)
	})
}

// TestUnusableSnapshotFallsBack: a snapshot that is cut or changed on disk,
// or that belongs to another topic, is not believed: consumer-current says
// why, replays the topic from earliest, and its state is the topic's.
func TestUnusableSnapshotFallsBack(t *testing.T) {
	in := Stack(t)
	snap := filepath.Join(t.TempDir(), "consumer-current.snapshot")
	args := []string{"consumer", "current", "--rebuild", "snapshot", "--snapshot", snap}
	prod := in.Role(t, "producer", "--interval", "20ms", "--seed", "32")
	cur := in.Role(t, args...)
	cur.Await("caught up", isType(status.CaughtUp), 60*time.Second)
	prod.Await("100 messages produced", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= 100
	}, 60*time.Second)
	pauseProducer(t, prod)
	tp := ReadTopic(t, in.Brokers, in.Topic)
	truth := LastStates(tp)
	awaitStateIs(t, cur.URL(30*time.Second), tp, truth)
	// A graceful stop writes the snapshot of the whole topic.
	if code, _ := cur.Stop(); code != 0 {
		t.Fatalf("consumer-current stopped with %d", code)
	}
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}

	// A whole one first: it is used.
	cur = in.Role(t, args...)
	if ev := cur.Await("rebuild", isType(status.Rebuild), 60*time.Second); ev.Reason != "" || ev.Sensors != len(truth.Sensors) {
		t.Fatalf("a good snapshot of %d sensors was not used: %d sensors restored, %q", len(truth.Sensors), ev.Sensors, ev.Reason)
	}
	awaitStateIs(t, cur.URL(30*time.Second), tp, truth)
	cur.Kill()

	other := "sensor-data-" + RandomSuffix()
	CreateTopic(t, in.Brokers, other, Partitions)
	for _, c := range []struct {
		name, topic string
		bytes       []byte
		want        string
	}{
		{"cut short", in.Topic, good[:len(good)*2/3], "snapshot unreadable"},
		{"changed", in.Topic, flipDigit(t, good), "snapshot unreadable: checksum mismatch"},
		{"another topic's", other, good, "the snapshot is of topic " + in.Topic + ", not " + other},
	} {
		if err := os.WriteFile(snap, c.bytes, 0o644); err != nil {
			t.Fatal(err)
		}
		a := append([]string{"consumer", "current", "--brokers", in.Brokers, "--mongo", in.Mongo, "--topic", c.topic}, args[2:]...)
		cur := Start(t, in.Bin, a...)
		ev := cur.Await("rebuild", isType(status.Rebuild), 60*time.Second)
		if !strings.Contains(ev.Reason, c.want) {
			t.Fatalf("%s snapshot: fell back for %q, want %q", c.name, ev.Reason, c.want)
		}
		t.Logf("%s snapshot: %s", c.name, ev.Reason)
		if c.topic == in.Topic {
			awaitStateIs(t, cur.URL(30*time.Second), tp, truth)
		}
		cur.Kill()
	}
}

// flipDigit changes the first digit of the snapshot's first offset.
func flipDigit(t *testing.T, b []byte) []byte {
	t.Helper()
	out := append([]byte(nil), b...)
	i := strings.Index(string(out), `"through":{"`)
	if i < 0 {
		t.Fatalf("the snapshot covers no offset:\n%s", b)
	}
	j := i + len(`"through":{"`) + strings.IndexByte(string(out[i+len(`"through":{"`):]), ':') + 1
	if out[j] == '9' {
		out[j] = '8'
	} else {
		out[j]++
	}
	return out
}
