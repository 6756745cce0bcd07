package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// usage503 asks consumer-query's /usage and returns the 503 reason ("" when
// the answer was not a 503 with a reason and an error text).
func usage503(url string) (string, error) {
	var body map[string]any
	code, err := GetJSON(url+"/usage", &body)
	if err != nil {
		return "", err
	}
	reason, _ := body["reason"].(string)
	msg, _ := body["error"].(string)
	if code != 503 || reason == "" || msg == "" {
		return "", fmt.Errorf("/usage answered %d %v; want 503 with a reason and an error", code, body)
	}
	return reason, nil
}

// processedDuring samples consumer-usage's processed count (GET /healthz)
// every 250 ms over window: an observation window in which nothing must
// happen, so it cannot be an await.
func processedDuring(t *testing.T, useURL string, window time.Duration) []int64 {
	t.Helper()
	var got []int64
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	end := time.After(window)
	for {
		var h struct {
			Stats struct {
				Processed int64 `json:"processed"`
			} `json:"stats"`
		}
		if code, err := GetJSON(useURL+"/healthz", &h); err == nil && code < 600 {
			got = append(got, h.Stats.Processed)
		}
		select {
		case <-tick.C:
		case <-end:
			if len(got) < 2 {
				t.Fatalf("consumer-usage /healthz answered %d times in %s", len(got), window)
			}
			return got
		}
	}
}

// TestStoreFaultsBackpressure: the embedded store SIGKILLed under load,
// restarted slow (--latency), SIGKILLed again and restarted on the same
// port and data. While it is down or slow consumer-usage announces
// backpressure and takes no new message (at most the one in hand
// completes), consumer-query answers 503 with the reason; afterwards the
// backpressure ends by itself and the usage in the store equals, to the
// cent, the usage computed independently from the topic (guarded drift 0).
func TestStoreFaultsBackpressure(t *testing.T) {
	if os.Getenv("MONGO_URI") != "" {
		t.Skip("store faults apply to the embedded store only")
	}
	in := Stack(t)
	dir := t.TempDir()
	st := Start(t, in.Bin, "store", "--listen", "127.0.0.1:0", "--data-dir", dir)
	addr := st.Listening("mongo", 30*time.Second)
	uri := "mongodb://" + addr + "/krl_e2e_faults"
	conn := []string{"--brokers", in.Brokers, "--mongo", uri, "--topic", in.Topic}
	group := "demo-usage-e2e-" + RandomSuffix()

	use := Start(t, in.Bin, append(append([]string{"consumer", "usage"}, conn...),
		"--mode", "guarded", "--reset", "earliest", "--group", group, "--store-slow", "500ms")...)
	qry := Start(t, in.Bin, append(append([]string{"consumer", "query"}, conn...), "--store-timeout", "1s")...)
	prod := Start(t, in.Bin, append(append([]string{"producer"}, conn...), "--interval", "100ms", "--seed", "11")...)
	qryURL := qry.URL(30 * time.Second)
	useURL := use.URL(30 * time.Second)
	use.Await("consumer-usage applied 100 messages", func(e status.Event) bool {
		return e.Type == status.Progress && e.Processed >= 100
	}, 60*time.Second)

	// 1. The store dies under load.
	mark := use.Mark()
	st.Kill()
	down := time.Now()
	bp := use.AwaitFrom(mark, "backpressure: store unreachable", func(e status.Event) bool {
		return e.Type == status.Backpressure && strings.HasPrefix(e.Reason, "store unreachable")
	}, 30*time.Second)
	t.Logf("store down: backpressure %.1f s after the SIGKILL (%s), partitions %v", time.Since(down).Seconds(), bp.Reason, bp.Partitions)
	AwaitCondition(t, "consumer-query 503 store_unreachable", 15*time.Second, 100*time.Millisecond, func() error {
		r, err := usage503(qryURL)
		if err == nil && r != "store_unreachable" {
			err = fmt.Errorf("reason %q", r)
		}
		return err
	})
	// Nothing new is taken while it is down: the count does not move.
	if got := processedDuring(t, useURL, 3*time.Second); got[0] != got[len(got)-1] {
		t.Fatalf("consumer-usage processed messages while the store was down: %v", got)
	}

	// 2. Back, but slow: every request 1.5 s late, over the 500 ms limit.
	mark = use.Mark()
	st2 := Start(t, in.Bin, "store", "--listen", addr, "--data-dir", dir, "--latency", "1500ms")
	st2.Listening("mongo", 30*time.Second)
	slow := use.AwaitFrom(mark, "backpressure: store slow", func(e status.Event) bool {
		return e.Type == status.Backpressure && strings.HasPrefix(e.Reason, "store slow")
	}, 30*time.Second)
	t.Logf("store slow: %s (in backpressure for %d ms)", slow.Reason, slow.Millis)
	if slow.Millis <= 0 {
		t.Errorf("the slow phase should continue the backpressure that began at the SIGKILL: millis %d", slow.Millis)
	}
	AwaitCondition(t, "consumer-query 503 store_slow", 20*time.Second, 200*time.Millisecond, func() error {
		r, err := usage503(qryURL)
		if err == nil && r != "store_slow" {
			err = fmt.Errorf("reason %q", r)
		}
		return err
	})
	// At most the batch in hand completes while the store is slow: guarded
	// mode counts a batch at once, so the count moves at most once (a
	// second step would be messages taken after the pause).
	counts := processedDuring(t, useURL, 5*time.Second)
	steps := 0
	for i := 1; i < len(counts); i++ {
		if counts[i] != counts[i-1] {
			steps++
		}
	}
	if steps > 1 {
		t.Fatalf("consumer-usage took new messages while the store was slow: processed %v", counts)
	}
	for _, e := range use.Events()[mark:] {
		if e.Type == status.BackpressureEnded {
			t.Fatalf("backpressure ended while the store was slow: %+v", e)
		}
	}

	// 3. SIGKILL again and back at full speed on the same port and data.
	st2.Kill()
	mark = use.Mark()
	st3 := Start(t, in.Bin, "store", "--listen", addr, "--data-dir", dir)
	st3.Listening("mongo", 30*time.Second)
	back := time.Now()
	ended := use.AwaitFrom(mark, "backpressure ended", isType(status.BackpressureEnded), 30*time.Second)
	t.Logf("store back: backpressure ended %.1f s later, after %.1f s in all", time.Since(back).Seconds(), float64(ended.Millis)/1000)

	paused := pauseProducer(t, prod)
	tp := ReadTopic(t, in.Brokers, in.Topic)
	if int64(tp.Count()) != paused.Produced {
		t.Fatalf("the producer reports %d delivered, the topic holds %d", paused.Produced, tp.Count())
	}
	truth := LastStates(tp)
	cps := awaitCheckpoints(t, uri, truth)
	u := checkUsage(t, qryURL, tp, cps)
	t.Logf("drift 0 on %d sensors %.1f s after the store came back (%d records, %.2f h, %.2f km, %d messages)",
		len(u.Sensors), time.Since(back).Seconds(), u.Total.Records, u.Total.TotalHours, u.Total.TotalKm, tp.Count())

	for _, c := range []*Child{prod, use, qry} {
		if code, took := c.Stop(); code != 0 {
			t.Errorf("%s exited %d after SIGTERM (%s)", c.Name, code, took)
		}
	}
	st3.Stop()
}

// TestHeadlessStoreLatency: the dashboard's --store-latency makes its
// embedded store slow from the start (every request 1.5 s late, over
// consumer-usage's 1 s limit): the event log shows consumer-usage in
// backpressure; the store crashed and restarted (x, r: a restart runs at
// full speed) ends it, and after a pause everything is exact (drift 0).
func TestHeadlessStoreLatency(t *testing.T) {
	t.Parallel() // a lab of its own that mostly waits on its slow store
	d := newDashboard(t)
	d.startHeadless(`
wait 12s
crash store
start store
wait-caught-up 90s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "guarded", "--interval", "200ms", "--seed", "5", "--store-latency", "1500ms")
	d.awaitLog("consumer-usage in backpressure (store slow)",
		regexp.MustCompile(`consumer-usage\s+backpressure: not taking new messages \(store slow`), 30*time.Second)
	if strings.Contains(d.stderr(), "store crashed on request") {
		t.Fatalf("the backpressure was shown only after the store crash:\n%s", d.stderr())
	}
	d.awaitLog("backpressure ended after the restart",
		regexp.MustCompile(`consumer-usage\s+backpressure ended after`), 60*time.Second)
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	log := d.stderr()
	if i, j := strings.Index(log, "store crashed on request"), strings.Index(log, "backpressure ended"); i < 0 || j < i {
		t.Errorf("backpressure should end after the store's restart (crash at %d, end at %d)", i, j)
	}
	r := d.readReport()
	rt := d.readRunTruth()
	checkUsageExact(t, r, rt)
	t.Logf("%d records; usage exact on %d sensors after the slow store", rt.Topic.Count(), len(rt.Expected))
}
