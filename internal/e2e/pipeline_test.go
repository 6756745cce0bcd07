package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// TestPipeline runs the whole product as real processes: broker, store,
// producer, consumer-current, consumer-usage (naive, default mode and
// reset) and consumer-query, compares what the consumers answer with the
// topic read independently, then crashes (SIGKILL) every consumer and the
// producer and checks each recovers as its strategy promises.
func TestPipeline(t *testing.T) {
	in := Stack(t)
	// Its own group: suites may share one real broker.
	group := "demo-usage-e2e-" + RandomSuffix()

	cur := in.Role(t, "consumer", "current")
	use := in.Role(t, "consumer", "usage", "--group", group)
	qry := in.Role(t, "consumer", "query")
	curURL, useURL, qryURL := cur.URL(30*time.Second), use.URL(30*time.Second), qry.URL(30*time.Second)
	// consumer-usage starts at latest: data flows once it owns the partitions.
	use.Await("consumer-usage assigned", isType(status.Assigned), 60*time.Second)

	prod := in.Role(t, "producer", "--interval", "50ms", "--seed", "42")
	prod.Await("300 messages produced", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= 300
	}, 60*time.Second)
	paused := pauseProducer(t, prod)

	tp := ReadTopic(t, in.Brokers, in.Topic)
	if int64(tp.Count()) != paused.Produced {
		t.Fatalf("the producer reports %d delivered, the topic holds %d records", paused.Produced, tp.Count())
	}
	truth := LastStates(tp)
	if truth.Invalid != 0 || len(truth.Sensors) != 10 {
		t.Fatalf("producer output: %d sensors, %d invalid records (%+v)", len(truth.Sensors), truth.Invalid, truth.InvalidAt)
	}
	t.Logf("phase 1: %d records, watermarks %v", tp.Count(), tp.HighWatermarks)

	state := checkState(t, curURL, tp, truth)
	cps := awaitCheckpoints(t, in.Mongo, truth)
	usage := checkUsage(t, qryURL, tp, cps)
	t.Logf("phase 1: /state and /usage match the topic (%d usage records, %.2f h, %.2f km)",
		usage.Total.Records, usage.Total.TotalHours, usage.Total.TotalKm)
	for name, u := range map[string]string{"consumer-current": curURL, "consumer-usage": useURL, "consumer-query": qryURL} {
		healthy(t, name, u)
	}

	// consumer-usage's auto commit catches up within about a second.
	var before map[int32]int64
	AwaitCondition(t, "consumer-usage committed up to the watermarks", 30*time.Second, 250*time.Millisecond, func() error {
		before = Committed(t, in.Brokers, group, in.Topic)
		for p, hw := range tp.HighWatermarks {
			if hw > 0 && before[p] != hw {
				return fmt.Errorf("partition %d committed %d, watermark %d", p, before[p], hw)
			}
		}
		return nil
	})

	// Crash every consumer, then keep producing while they are down; crash
	// the producer too and start a new one: it must continue the odometers.
	cur.Kill()
	use.Kill()
	qry.Kill()
	mark := prod.Mark()
	prod.Signal(syscall.SIGUSR2)
	prod.AwaitFrom(mark, "producer resumed", isType(status.Resumed), 10*time.Second)
	prod.AwaitFrom(mark, "producer progress after resume", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= paused.Produced+100
	}, 30*time.Second)
	prod.Kill()
	prod2 := in.Role(t, "producer", "--interval", "50ms", "--seed", "42")
	prod2.Await("restarted producer produced 100", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= 100
	}, 60*time.Second)
	pauseProducer(t, prod2)

	tp2 := ReadTopic(t, in.Brokers, in.Topic)
	truth2 := LastStates(tp2)
	if truth2.Invalid != 0 {
		// The restarted producer went below what was in the topic.
		t.Fatalf("after the producer restart %d records went backwards: %+v", truth2.Invalid, truth2.InvalidAt)
	}
	var whileDown int64
	for p, hw := range tp2.HighWatermarks {
		whileDown += hw - before[p]
	}
	t.Logf("phase 2: %d records, %d produced while the consumers were down", tp2.Count(), whileDown)
	if got := Committed(t, in.Brokers, group, in.Topic); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("committed offsets changed while consumer-usage was dead: %v, then %v", before, got)
	}

	cur2 := in.Role(t, "consumer", "current")
	use2 := in.Role(t, "consumer", "usage", "--group", group)
	qry2 := in.Role(t, "consumer", "query")
	cur2URL, qry2URL := cur2.URL(30*time.Second), qry2.URL(30*time.Second)

	// consumer-current: a fresh group replays everything.
	started := cur2.Await("consumer-current started", isType(status.Started), 10*time.Second)
	if started.GroupID == state.GroupID || started.GroupID == "" {
		t.Fatalf("restarted consumer-current reuses group %q (first run %q)", started.GroupID, state.GroupID)
	}
	caught := cur2.Await("consumer-current caught up", isType(status.CaughtUp), 60*time.Second)
	if caught.Processed < int64(tp2.Count()) {
		t.Fatalf("caught up after %d records, the topic had %d at restart", caught.Processed, tp2.Count())
	}
	checkState(t, cur2URL, tp2, truth2)

	// consumer-usage: resumes from its commits, neither from latest (the
	// messages produced while it was down are processed: checkpoints reach
	// them) nor from earliest (it processes exactly those messages).
	cps2 := awaitCheckpoints(t, in.Mongo, truth2)
	checkUsage(t, qry2URL, tp2, cps2)
	var after map[int32]int64
	AwaitCondition(t, "restarted consumer-usage committed up to the watermarks", 30*time.Second, 250*time.Millisecond, func() error {
		after = Committed(t, in.Brokers, group, in.Topic)
		for p, hw := range tp2.HighWatermarks {
			if after[p] < before[p] {
				return fmt.Errorf("partition %d committed %d, before the crash %d", p, after[p], before[p])
			}
			if hw > 0 && after[p] != hw {
				return fmt.Errorf("partition %d committed %d, watermark %d", p, after[p], hw)
			}
		}
		return nil
	})
	use2.Await("restarted consumer-usage processed what was produced while it was down", func(e status.Event) bool {
		return e.Type == status.Progress && e.Processed >= whileDown
	}, 30*time.Second)
	for _, e := range use2.Events() {
		if e.Type == status.Progress && e.Processed > whileDown {
			t.Fatalf("restarted consumer-usage processed %d records, only %d were new: it replayed history", e.Processed, whileDown)
		}
	}
	t.Logf("phase 2: committed %v -> %v; /state and /usage match the topic again", before, after)

	// Clean shutdown of everything still running.
	for _, c := range []*Child{cur2, use2, qry2, prod2} {
		if code, took := c.Stop(); code != 0 {
			t.Errorf("%s exited %d after SIGTERM (%s)", c.Name, code, took)
		}
	}
}
