package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/consumers/usage"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// bigFieldBytes is the extra field of the test's large records: with it a
// reading is some 1,000,150 bytes, over the dead-letter producer's limit
// (kafkacfg.DeadLetterMaxBytes) and under the 1048588 bytes a topic takes
// by default on both brokers.
const bigFieldBytes = 1_000_000

// TestOversizedPoisonRecord writes, with a client of its own, a poison
// record of about 1 MB (a backwards reading with a large extra field) and a
// valid one as large, between valid readings, and checks against the
// topic read independently:
//   - consumer-usage forwards the poison record to the dead-letter topic
//     cut to fit (reason, key, source partition and offset, the source's
//     sizes, a prefix of the value, the cut flag), moves on, and its
//     committed offsets reach the high watermarks (lag 0); restarted in a
//     fresh group it forwards nothing twice;
//   - consumer-current and the audit read both large records, skip the
//     poison one and hold the valid one as the sensor's last state;
//     consumer-current's changelog holds that state for its next start.
func TestOversizedPoisonRecord(t *testing.T) {
	in := Stack(t)
	dlqTopic := kafkacfg.DeadLetterTopic(in.Topic)
	group := "demo-usage-e2e-" + RandomSuffix()

	t0 := time.Now().Add(-time.Minute).UnixMilli()
	reading := func(i int, hours float64, extra int) [2][]byte {
		m := telemetry.Message{SensorID: "sensor-01", Timestamp: t0 + int64(i)*1000,
			Odometry: telemetry.Odometry{HoursTot: hours, KmTot: hours * 10},
			Position: telemetry.Position{Lat: 45.1, Lon: 9.2}}
		return [2][]byte{[]byte(m.SensorID), withExtraField(t, m, extra)}
	}
	recs := ProduceWith(t, kafkacfgtest.LargeProducer(in.Brokers, 2*bigFieldBytes), in.Topic,
		reading(0, 100, 0),
		reading(1, 50, bigFieldBytes), // backwards: poison
		reading(2, 101, 0),
		reading(3, 102, bigFieldBytes), // valid
		reading(4, 103, 0),
	)
	big := recs[1]
	if len(big.Value) <= kafkacfg.DeadLetterMaxBytes {
		t.Fatalf("the poison record is %d bytes, not over the dead-letter limit", len(big.Value))
	}
	tp := ReadTopic(t, in.Brokers, in.Topic)
	truth := LastStates(tp)
	if tp.Count() != len(recs) || truth.Invalid != 1 || truth.InvalidAt[0].Offset != big.Offset {
		t.Fatalf("the topic holds %d records, %d invalid (%+v)", tp.Count(), truth.Invalid, truth.InvalidAt)
	}
	poison := map[string]Record{pos(big.Partition, big.Offset): big}
	t.Logf("poison record %s: %d bytes (key %d, value %d)", pos(big.Partition, big.Offset), len(big.Key)+len(big.Value), len(big.Key), len(big.Value))

	use := in.Role(t, "consumer", "usage", "--reset", "earliest", "--group", group)
	curArgs := []string{"consumer", "current", "--rebuild", "changelog"}
	cur := in.Role(t, curArgs...)
	qry := in.Role(t, "consumer", "query")
	awaitUsageInvalid(t, use, tp, 1)
	checkInvalidEvents(t, use, poison)
	awaitLagZero(t, in.Brokers, group, in.Topic, tp)
	cps := awaitCheckpoints(t, in.Mongo, truth)
	checkUsage(t, qry.URL(30*time.Second), tp, cps)

	dlq := readDLQ(t, in.Brokers, dlqTopic)
	if len(dlq) != 1 {
		t.Fatalf("the dead-letter topic holds %d records, want the poison one", len(dlq))
	}
	checkCutDeadLetter(t, dlq[0], in.Topic, big)

	// The other readers of the topic: consumer-current, from the topic and
	// again from its changelog, and the audit.
	checkState(t, cur.URL(30*time.Second), tp, truth)
	checkInvalidEvents(t, cur, poison)
	if code, took := cur.Stop(); code != 0 { // a graceful stop publishes the changelog
		t.Fatalf("consumer-current exited %d after SIGTERM (%s)", code, took)
	}
	cur2 := in.Role(t, curArgs...)
	if ev := cur2.Await("rebuild announced", isType(status.Rebuild), 60*time.Second); ev.Strategy != "changelog" || ev.Reason != "" {
		t.Fatalf("consumer-current restarted with %q (%s), want the changelog", ev.Strategy, ev.Reason)
	}
	awaitStateIs(t, cur2.URL(30*time.Second), tp, truth)
	checkAudit(t, in.Brokers, in.Topic, tp, truth, poison, cps)

	// Every record delivered again in a fresh group: the poison record is
	// known to be forwarded, so nothing is written twice.
	use.Kill()
	use2 := in.Role(t, "consumer", "usage", "--reset", "earliest", "--group", group+"-again")
	awaitUsageInvalid(t, use2, tp, 1)
	awaitLagZero(t, in.Brokers, group+"-again", in.Topic, tp)
	if again := readDLQ(t, in.Brokers, dlqTopic); len(again) != 1 {
		t.Fatalf("after the restart the dead-letter topic holds %d records: forwarded twice", len(again))
	}
	if code, took := use2.Stop(); code != 0 {
		t.Errorf("consumer-usage exited %d after SIGTERM (%s)", code, took)
	}
}

// withExtraField is m's JSON with a field "note" of n characters (none
// when n is 0).
func withExtraField(t *testing.T, m telemetry.Message, n int) []byte {
	t.Helper()
	v, err := telemetry.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return v
	}
	note, _ := json.Marshal(strings.Repeat("n", n))
	return append(append(bytes.TrimSuffix(v, []byte("}")), append([]byte(`,"note":`), note...)...), '}')
}

// awaitLagZero waits until group's committed offsets reach tp's high
// watermarks on every partition that holds records.
func awaitLagZero(t *testing.T, brokers, group, topic string, tp Topic) {
	t.Helper()
	AwaitCondition(t, group+" lag 0", 30*time.Second, 250*time.Millisecond, func() error {
		committed := Committed(t, brokers, group, topic)
		var lag int64
		for p, hw := range tp.HighWatermarks {
			if hw > 0 {
				lag += hw - committed[p]
			}
		}
		if lag != 0 {
			return fmt.Errorf("lag %d (committed %v, high watermarks %v)", lag, committed, tp.HighWatermarks)
		}
		return nil
	})
}

// checkCutDeadLetter: r is src's dead-letter record, cut to fit under the
// dead-letter producer's limit, saying so, with every field that names src.
func checkCutDeadLetter(t *testing.T, r dlqRecord, source string, src Record) {
	t.Helper()
	h := r.Headers
	size := len(r.Key) + len(r.Value)
	for k, v := range h {
		size += len(k) + len(v)
	}
	t.Logf("dead-letter record: %d bytes (value prefix %d of %d), headers %v", size, len(r.Value), len(src.Value), withoutReason(h))
	switch {
	case h[usage.HeaderSourceTopic] != source || h[usage.HeaderSourcePartition] != strconv.Itoa(int(src.Partition)) ||
		h[usage.HeaderSourceOffset] != strconv.FormatInt(src.Offset, 10):
		t.Errorf("dead-letter record names %s %s/%s, want %s %s", h[usage.HeaderSourceTopic],
			h[usage.HeaderSourcePartition], h[usage.HeaderSourceOffset], source, pos(src.Partition, src.Offset))
	case !strings.HasPrefix(h[usage.HeaderReason], string(telemetry.Backwards)+": "):
		t.Errorf("reason %q, want %s", h[usage.HeaderReason], telemetry.Backwards)
	case !bytes.Equal(r.Key, src.Key):
		t.Errorf("key %q, the source's is %q", r.Key, src.Key)
	case h[usage.HeaderCut] != "true":
		t.Errorf("not marked as cut: headers %v", withoutReason(h))
	case h[usage.HeaderValueSize] != strconv.Itoa(len(src.Value)) || h[usage.HeaderKeySize] != strconv.Itoa(len(src.Key)):
		t.Errorf("source sizes %s/%s, want %d/%d", h[usage.HeaderKeySize], h[usage.HeaderValueSize], len(src.Key), len(src.Value))
	case len(r.Value) == 0 || len(r.Value) >= len(src.Value) || !bytes.HasPrefix(src.Value, r.Value):
		t.Errorf("value of %d bytes is not a cut prefix of the source's %d", len(r.Value), len(src.Value))
	case size > kafkacfg.DeadLetterMaxBytes:
		t.Errorf("dead-letter record of %d bytes, over the limit %d", size, kafkacfg.DeadLetterMaxBytes)
	}
}

func withoutReason(h map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		if k != usage.HeaderReason {
			out[k] = v
		}
	}
	return out
}
