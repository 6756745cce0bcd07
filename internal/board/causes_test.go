package board

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func causesInput(sec float64, causes ...Cause) UsageSnapshot {
	var h, km int64
	for _, c := range causes {
		d := c.Drift()
		h, km = h+d.HoursCents, km+d.KmCents
	}
	return UsageSnapshot{At: at(sec), Sensors: []UsageTotals{{SensorID: "s1", HoursCents: 1000 + h, KmCents: 2000 + km,
		Records: 5, Partition: 2, Offset: 90, Expect: ExpectReady, ExpectedHoursCents: 1000, ExpectedKmCents: 2000, Causes: causes}}}
}

// The w view groups a drift's causes by kind, partition and writer, adds
// them up to the drift, and the timeline names each new group once.
func TestWhyGroupsCausesAndNamesNewGroups(t *testing.T) {
	w1 := "consumer-usage@2026-01-02T10:00:00Z"
	again := Cause{Kind: CauseCountedAgain, Partition: 2, Offset: 41, Records: 2, Writer: w1,
		RecordedHoursCents: 50, RecordedKmCents: 100, ExpectedHoursCents: 25, ExpectedKmCents: 50}
	stale := Cause{Kind: CauseStaleReading, Partition: 2, Offset: 80, Records: 1, Writer: w1, BaseTimestamp: 1_767_348_000_000,
		RecordedHoursCents: 900, RecordedKmCents: 1000, ExpectedHoursCents: 10, ExpectedKmCents: 20}
	stale2 := stale
	stale2.Offset = 85
	b := newBoard(ProcStarted{Name: Query, PID: 12, At: at(0)})
	b.Apply(causesInput(1, again))
	if n := countEvents(b, "drift named: "); n != 1 {
		t.Fatalf("%d timeline lines for the first group", n)
	}
	b.Apply(causesInput(2, again, stale))
	b.Apply(causesInput(3, again, stale, stale2))
	if n := countEvents(b, "drift named: "); n != 2 {
		t.Fatalf("%d timeline lines for two groups", n)
	}
	v := b.Why("")
	if v.Drift == nil || *v.Drift != (Drift{HoursCents: 25 + 2*890, KmCents: 50 + 2*980}) || v.Messages != 3 || len(v.Groups) != 2 {
		t.Fatalf("why %+v", v)
	}
	g := v.Groups[1]
	if g.Kind != CauseStaleReading || g.Messages != 2 || g.FirstOffset != 80 || g.LastOffset != 85 || g.Drift.HoursCents != 1780 {
		t.Fatalf("stale group %+v", g)
	}
	words := g.Words()
	for _, want := range []string{"+17.80 h +19.60 km: 2 messages of p2 (offsets 80–85)", "by consumer-usage (started ", "stale reading of "} {
		if !strings.Contains(words, want) {
			t.Errorf("words %q lack %q", words, want)
		}
	}
	if s := b.Why("s1"); len(s.Causes) != 3 || s.SensorID != "s1" {
		t.Fatalf("sensor why %+v", s)
	}
	if ds := b.DriftingSensors(); len(ds) != 1 || ds[0] != "s1" {
		t.Fatalf("drifting sensors %v", ds)
	}
}

// A stale reading's words say when its writer took the partition: back,
// holding its reading, after it had it before; or at its first take,
// with the checkpoint it had loaded.
func TestWhySaysWhenTheWriterTookThePartition(t *testing.T) {
	w1 := "consumer-usage@" + at(0).Format(time.RFC3339Nano)
	w2 := "consumer-usage-2@" + at(5).Format(time.RFC3339Nano)
	stale := func(writer string, offset int64) Cause {
		return Cause{Kind: CauseStaleReading, Partition: 2, Offset: offset, Records: 1, Writer: writer,
			BaseTimestamp: at(4).UnixMilli(), RecordedHoursCents: 900, ExpectedHoursCents: 10}
	}
	assigned := func(name string, sec float64, gen int32, parts ...int32) ProcStatus {
		return ev(name, sec, status.Event{Type: status.Assigned, Partitions: parts, Member: name + "-m", Generation: gen})
	}
	b := newBoard(
		ProcStarted{Name: Query, PID: 12, At: at(0)},
		assigned(Usage, 1, 1, 0, 1, 2),
		assigned(Usage, 6, 2, 0, 1),
		ProcAdded{Name: "consumer-usage-2", At: at(5)},
		ProcStarted{Name: "consumer-usage-2", PID: 13, At: at(5)},
		assigned("consumer-usage-2", 6, 2, 2),
	)
	b.Apply(causesInput(8, stale(w2, 40)))
	b.Apply(assigned(Usage, 20, 3, 0, 1, 2))
	b.Apply(causesInput(22, stale(w2, 40), stale(w1, 90)))
	v := b.Why("")
	if len(v.Groups) != 2 {
		t.Fatalf("groups %+v", v.Groups)
	}
	clock := func(sec float64) string { return at(sec).Local().Format("15:04:05") }
	want := map[string]string{
		w1: "after it took p2 back at " + clock(20) + " holding its reading of " + clock(4),
		w2: "after it took p2 at " + clock(6) + " with the checkpoint it had loaded, a reading of " + clock(4),
	}
	for _, g := range v.Groups {
		if words := g.Words(); !strings.Contains(words, want[g.Writer]) {
			t.Errorf("%s: words %q lack %q", g.Writer, words, want[g.Writer])
		}
	}
}

// Records that break the schema are said on the timeline when their count
// changes, and carried in the report; they are never a drift.
func TestMalformedRecordsSaid(t *testing.T) {
	b := newBoard(ProcStarted{Name: Query, PID: 12, At: at(0)})
	in := causesInput(1)
	in.Malformed = map[string]int{"date not YYYY-MM-DD": 2, "delta_km negative": 1}
	in.Example = map[string]string{"date not YYYY-MM-DD": `{"date": "yesterday"}`, "delta_km negative": `{"delta_km": -1}`}
	b.Apply(in)
	in.At = at(2)
	b.Apply(in)
	if n := countEvents(b, "3 usage records that break the schema"); n != 1 {
		t.Fatalf("%d timeline lines for the same malformed records, want 1", n)
	}
	if n := countEvents(b, `date not YYYY-MM-DD: 2 (e.g. {"date": "yesterday"})`); n != 1 {
		t.Fatalf("the line does not say why with an example")
	}
	if got := b.Report().MalformedRecords; got["date not YYYY-MM-DD"] != 2 || got["delta_km negative"] != 1 {
		t.Fatalf("report: %v", got)
	}
	if r := b.Usage().Total; r.Drift == nil || r.Drift.HoursCents != 0 {
		t.Fatalf("malformed records made a drift: %+v", r.Drift)
	}
}

// With the user's consumer-usage the lab reads its records itself: the
// usage panel is live without consumer-query, the row reads "yours",
// judged alive by liveness, and comes up at its start (it says nothing).
func TestYourConsumerOnTheBoard(t *testing.T) {
	b := New(all(), Config{Brokers: "127.0.0.1:9092", Mongo: "mongodb://127.0.0.1:27017", UsageCmd: "python3 c.py"})
	b.Apply(ProcStarted{Name: Usage, PID: 7, At: at(0)})
	b.Apply(Tick{Now: at(1)})
	if v := b.Usage(); v.Status != Waiting {
		t.Fatalf("before a read: %v %q", v.Status, v.Reason)
	}
	b.Apply(causesInput(1))
	b.Apply(Tick{Now: at(2)})
	if v := b.Usage(); v.Status != Live {
		t.Fatalf("consumer-query never started, the lab read the records: %v %q", v.Status, v.Reason)
	}
	p := b.Process(Usage)
	if p.State != Running || p.Strategy != "yours" || p.Health.Label != "alive" || p.Usage.Command != "python3 c.py" || p.Usage.Mode != "yours" {
		t.Fatalf("row: state %s strategy %q health %q usage %+v", p.State, p.Strategy, p.Health.Label, p.Usage)
	}
	b.Apply(Tick{Now: at(9)})
	if v := b.Usage(); v.Status != Stale {
		t.Fatalf("8 s after the last read: %v %q", v.Status, v.Reason)
	}
}
