package e2e

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	RemoveBinary()
	os.Exit(code)
}

func isType(tp status.Type) func(status.Event) bool {
	return func(e status.Event) bool { return e.Type == tp }
}

// pauseProducer sends SIGUSR1 and waits for Paused, which the producer
// emits after flushing: everything it sent is in the topic then.
func pauseProducer(t *testing.T, prod *Child) status.Event {
	t.Helper()
	mark := prod.Mark()
	prod.Signal(syscall.SIGUSR1)
	return prod.AwaitFrom(mark, "producer paused", isType(status.Paused), 30*time.Second)
}

// checkState waits until consumer-current's /state shows exactly the truth
// of tp: caught up, every record read, the same invalid count, positions
// at the high watermarks and every sensor's last valid message.
func checkState(t *testing.T, baseURL string, tp Topic, truth Truth) StateBody {
	t.Helper()
	var got StateBody
	AwaitCondition(t, "consumer-current /state equals the topic read independently", 60*time.Second, 100*time.Millisecond, func() error {
		got = StateBody{}
		code, err := GetJSON(baseURL+"/state", &got)
		switch {
		case err != nil:
			return err
		case code != 200:
			return fmt.Errorf("/state answered %d", code)
		case !got.CaughtUp:
			return fmt.Errorf("not caught up (processed %d of %d)", got.Processed, tp.Count())
		case got.Processed != int64(tp.Count()):
			return fmt.Errorf("processed %d, the topic has %d records", got.Processed, tp.Count())
		case got.Invalid != int64(truth.Invalid):
			return fmt.Errorf("invalid %d, the topic has %d invalid records", got.Invalid, truth.Invalid)
		}
		if len(got.Positions) != len(tp.HighWatermarks) {
			return fmt.Errorf("positions %+v, topic watermarks %v", got.Positions, tp.HighWatermarks)
		}
		for _, p := range got.Positions {
			if hw := tp.HighWatermarks[p.Partition]; p.Offset != hw || p.HighWatermark != hw {
				return fmt.Errorf("partition %d at %d (hwm %d), topic hwm %d", p.Partition, p.Offset, p.HighWatermark, hw)
			}
		}
		return CompareState(got, truth)
	})
	return got
}

// awaitCheckpoints waits until consumer-usage's checkpoint of every sensor
// is the sensor's last valid record of tp.
func awaitCheckpoints(t *testing.T, uri string, truth Truth) map[string]store.Checkpoint {
	t.Helper()
	var cps map[string]store.Checkpoint
	AwaitCondition(t, "consumer-usage checkpoints at every sensor's last record", 60*time.Second, 250*time.Millisecond, func() error {
		cps = LoadCheckpoints(t, uri)
		for id, s := range truth.Sensors {
			cp, ok := cps[id]
			if !ok {
				return fmt.Errorf("%s has no checkpoint", id)
			}
			if cp.Partition != s.Partition || cp.Offset != s.Offset {
				return fmt.Errorf("%s checkpoint at %d/%d, last record at %d/%d", id, cp.Partition, cp.Offset, s.Partition, s.Offset)
			}
		}
		return nil
	})
	return cps
}

// checkUsage waits until consumer-query's /usage equals the usage computed
// independently from the topic over each sensor's checkpointed window.
func checkUsage(t *testing.T, queryURL string, tp Topic, cps map[string]store.Checkpoint) UsageBody {
	t.Helper()
	want := ExpectedUsage(tp, cps)
	var all store.Totals
	for _, w := range want {
		all.HoursCents += w.HoursCents
		all.KmCents += w.KmCents
		all.Records += w.Records
	}
	if all.Records == 0 {
		t.Fatalf("the usage window holds no delta at all: nothing would be checked")
	}
	var got UsageBody
	AwaitCondition(t, "consumer-query /usage equals the deltas summed from the topic", 30*time.Second, 200*time.Millisecond, func() error {
		got = UsageBody{}
		code, err := GetJSON(queryURL+"/usage", &got)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("/usage answered %d", code)
		}
		seen := map[string]bool{}
		for i, l := range got.Sensors {
			if i > 0 && got.Sensors[i-1].SensorID >= l.SensorID {
				return fmt.Errorf("/usage not sorted at %s", l.SensorID)
			}
			seen[l.SensorID] = true
			w := want[l.SensorID]
			if g := lineTotals(l); g != w {
				return fmt.Errorf("%s: /usage %+v, topic says %+v (cents)", l.SensorID, g, w)
			}
		}
		for id, w := range want {
			if w.Records > 0 && !seen[id] {
				return fmt.Errorf("%s missing from /usage, topic says %+v", id, w)
			}
		}
		if g := lineTotals(got.Total); g != all {
			return fmt.Errorf("/usage total %+v, topic says %+v (cents)", g, all)
		}
		return nil
	})
	return got
}

func lineTotals(l UsageLine) store.Totals {
	return store.Totals{HoursCents: store.Cents(l.TotalHours), KmCents: store.Cents(l.TotalKm), Records: l.Records}
}

func healthy(t *testing.T, name, baseURL string) {
	t.Helper()
	var body map[string]any
	code, err := GetJSON(baseURL+"/healthz", &body)
	if err != nil || code != 200 {
		t.Fatalf("%s /healthz: %d %v %v", name, code, body, err)
	}
}
