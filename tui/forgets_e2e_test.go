package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/e2e"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// reportSensor is the part of a report's sensor these checks read.
type reportSensor struct {
	SensorID    string `json:"sensor_id"`
	DriftCauses []struct {
		Kind      string `json:"kind"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
	} `json:"drift_causes"`
}

// reportRetention is the report's retention (the contract of --report).
type reportRetention struct {
	Forgotten []struct {
		Sensor    string `json:"sensor"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
	} `json:"forgotten"`
}

// message names one message of the topic for a sensor.
type message struct {
	sensor    string
	partition int32
	offset    int64
}

func (m message) String() string { return fmt.Sprintf("%s p%d@%d", m.sensor, m.partition, m.offset) }

// uncountedSet is e2e.Uncounted as a set.
func uncountedSet(tp e2e.Topic, recorded map[store.Position]bool) map[message]bool {
	out := map[message]bool{}
	for id, recs := range e2e.Uncounted(tp, recorded) {
		for _, r := range recs {
			out[message{id, r.Partition, r.Offset}] = true
		}
	}
	return out
}

// tapOf is the run's tap, or fails the test if it saw nothing.
func tapOf(t *testing.T, rep scenarioReport) e2e.TapResult {
	t.Helper()
	seen := rep.tap
	switch {
	case seen == nil:
		t.Fatal("the run was not tapped: the dashboard never logged its broker and store")
	case seen.Err != nil:
		t.Fatalf("tap: %v", seen.Err)
	case seen.Topic.Count() == 0 || seen.StoreReads == 0:
		t.Fatalf("tap read %d records and the store %d times: nothing to check against", seen.Topic.Count(), seen.StoreReads)
	}
	return *seen
}

// retentionAgainstTheTopic checks what the retention scenario names
// against a reader of the test's own that read the topic as it was
// written (before retention deleted it) and the store: the messages
// consumer-usage never counted, and the sensors a replay forgot.
//
//   - Never counted: a message that yields a delta, has no usage record
//     in the store, and is followed by one of its sensor that has. They
//     must be exactly the report's drift causes of kinds never-recorded
//     and deleted-by-retention, and those of deleted-by-retention must be
//     below their partition's log start.
//   - Forgotten: a sensor whose last message is below its partition's log
//     start. They must be exactly the report's retention.forgotten, each
//     with its last message.
func retentionAgainstTheTopic(t *testing.T, rep scenarioReport) {
	t.Helper()
	seen := tapOf(t, rep)
	recorded := map[store.Position]bool{}
	for _, srcs := range seen.Sources {
		for _, s := range srcs {
			recorded[s.Position] = true
		}
	}
	independent := uncountedSet(seen.Topic, recorded)
	named := map[message]bool{}
	deleted := 0
	for _, s := range rep.Sensors {
		for _, c := range s.DriftCauses {
			if c.Kind != "never-recorded" && c.Kind != "deleted-by-retention" {
				continue
			}
			named[message{s.SensorID, c.Partition, c.Offset}] = true
			if c.Kind == "deleted-by-retention" {
				deleted++
				if c.Offset >= seen.LogStart[c.Partition] {
					t.Errorf("%s p%d@%d named deleted by retention, but the log of p%d starts at %d",
						s.SensorID, c.Partition, c.Offset, c.Partition, seen.LogStart[c.Partition])
				}
			}
		}
	}
	t.Logf("tap: %d records read, log starts %v, %d store reads; never counted: %d found, %d named (%d of them deleted by retention)",
		seen.Topic.Count(), seen.LogStart, seen.StoreReads, len(independent), len(named), deleted)
	if len(independent) == 0 {
		t.Error("the tap found no message consumer-usage went past without counting: the lesson skipped nothing")
	}
	compareSets(t, "never counted", independent, named)

	last := map[string]message{}
	for _, r := range seen.Topic.Records {
		if m, err := telemetry.Decode(r.Key, r.Value); err == nil {
			last[m.SensorID] = message{m.SensorID, r.Partition, r.Offset}
		}
	}
	gone := map[message]bool{}
	for _, m := range last {
		if m.offset < seen.LogStart[m.partition] {
			gone[m] = true
		}
	}
	forgotten := map[message]bool{}
	if rep.Retention != nil {
		for _, f := range rep.Retention.Forgotten {
			forgotten[message{f.Sensor, f.Partition, f.Offset}] = true
		}
	}
	t.Logf("sensors whose last message was deleted: %v; the report's forgotten: %v", sortedMessages(gone), sortedMessages(forgotten))
	if len(gone) == 0 {
		t.Error("no sensor's last message was deleted: the lesson forgot nothing")
	}
	compareSets(t, "forgotten", gone, forgotten)
}

// expiryAgainstTheTopic checks what the offsets-expire scenario names
// against a reader of the test's own (the whole topic and the store):
// the messages consumer-usage went past without counting before the
// lesson's replay from earliest (the records of the processes that ran
// before it) must be exactly as many as the scenario named, and all
// inside the ranges it says latest skipped, which must hold as many
// messages of the topic as it says.
func expiryAgainstTheTopic(t *testing.T, rep scenarioReport) {
	t.Helper()
	seen := tapOf(t, rep)
	before := recordsBeforeTheReplay(t, seen.Sources)
	independent := uncountedSet(seen.Topic, before)

	skippedObs := observed(t, rep, "latest started it at the end")
	namedObs := observed(t, rep, "the skipped messages are named")
	ranges := map[int32][2]int64{}
	for _, m := range regexp.MustCompile(`p(\d+) (\d+)–(\d+)`).FindAllStringSubmatch(afterColon(skippedObs), -1) {
		p, _ := strconv.Atoi(m[1])
		from, _ := strconv.ParseInt(m[2], 10, 64)
		to, _ := strconv.ParseInt(m[3], 10, 64)
		ranges[int32(p)] = [2]int64{from, to}
	}
	skipped := countBefore(t, skippedObs, " messages skipped")
	named := countBefore(t, namedObs, " messages named")
	inRanges := 0
	for _, r := range seen.Topic.Records {
		if g, ok := ranges[r.Partition]; ok && r.Offset >= g[0] && r.Offset <= g[1] {
			inRanges++
		}
	}
	t.Logf("tap: %d records read, %d store reads; the scenario: %d skipped in %v, %d named; the topic holds %d in those ranges, %d never counted before the replay",
		seen.Topic.Count(), seen.StoreReads, skipped, ranges, named, inRanges, len(independent))
	if len(ranges) == 0 {
		t.Errorf("no skipped range in %q", skippedObs)
	}
	if int64(inRanges) != skipped {
		t.Errorf("the topic holds %d messages in the skipped ranges %v, the scenario says %d", inRanges, ranges, skipped)
	}
	if int64(len(independent)) != named {
		t.Errorf("%d messages were never counted before the replay, the scenario named %d", len(independent), named)
	}
	for _, m := range sortedMessages(independent) {
		if g, ok := ranges[m.partition]; !ok || m.offset < g[0] || m.offset > g[1] {
			t.Errorf("%v was never counted, outside the skipped ranges %v", m, ranges)
		}
	}
}

// recordsBeforeTheReplay are the positions recorded by the consumer-usage
// processes that ran before the first one that started over: one whose
// records go below where an earlier process had recorded on a partition.
// A writer is "instance@start" (store.Writer), so its start orders them.
func recordsBeforeTheReplay(t *testing.T, sources map[string][]store.RecordSource) map[store.Position]bool {
	t.Helper()
	byWriter := map[string][]store.Position{}
	for _, srcs := range sources {
		for _, s := range srcs {
			byWriter[s.Writer] = append(byWriter[s.Writer], s.Position)
		}
	}
	started := func(w string) time.Time {
		at, err := time.Parse(time.RFC3339Nano, w[strings.LastIndex(w, "@")+1:])
		if err != nil {
			t.Fatalf("usage record writer %q: %v", w, err)
		}
		return at
	}
	writers := slices.SortedFunc(maps.Keys(byWriter), func(a, b string) int { return started(a).Compare(started(b)) })
	furthest := map[int32]int64{}
	out := map[store.Position]bool{}
	for _, w := range writers {
		for _, p := range byWriter[w] {
			if far, ok := furthest[p.Partition]; ok && p.Offset < far {
				t.Logf("usage records before the replay: %d, of the writers before %s", len(out), w)
				return out
			}
		}
		for _, p := range byWriter[w] {
			out[p] = true
			furthest[p.Partition] = max(furthest[p.Partition], p.Offset)
		}
	}
	t.Fatalf("no consumer-usage process started over (writers %v): the replay from earliest is not in the store", writers)
	return nil
}

// observed is the observation of the report's check whose description
// starts with what.
func observed(t *testing.T, rep scenarioReport, what string) string {
	t.Helper()
	for _, c := range rep.Scenario.Checks {
		if strings.HasPrefix(c.What, what) {
			return c.Observed
		}
	}
	t.Fatalf("the report has no check %q", what)
	return ""
}

// afterColon is s after its first ": ".
func afterColon(s string) string {
	if i := strings.Index(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// countBefore is the number (with thousands commas) right before suffix in s.
func countBefore(t *testing.T, s, suffix string) int64 {
	t.Helper()
	m := regexp.MustCompile(`([\d,]+)` + regexp.QuoteMeta(suffix)).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no count before %q in %q", suffix, s)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("count %q in %q: %v", m[1], s, err)
	}
	return n
}

// compareSets fails the test when found and named differ, listing up to
// ten of each difference.
func compareSets(t *testing.T, what string, found, named map[message]bool) {
	t.Helper()
	var onlyFound, onlyNamed []message
	for m := range found {
		if !named[m] {
			onlyFound = append(onlyFound, m)
		}
	}
	for m := range named {
		if !found[m] {
			onlyNamed = append(onlyNamed, m)
		}
	}
	if len(onlyFound)+len(onlyNamed) > 0 {
		t.Errorf("%s: %d found by the tap and not named by the report %v; %d named and not found %v",
			what, len(onlyFound), firstTen(onlyFound), len(onlyNamed), firstTen(onlyNamed))
	}
}

func firstTen(ms []message) []message {
	ms = sortMessages(ms)
	return ms[:min(len(ms), 10)]
}

func sortedMessages(set map[message]bool) []message {
	return sortMessages(slices.Collect(maps.Keys(set)))
}

func sortMessages(ms []message) []message {
	slices.SortFunc(ms, func(a, b message) int {
		if a.partition != b.partition {
			return int(a.partition - b.partition)
		}
		return int(a.offset - b.offset)
	})
	return ms
}
