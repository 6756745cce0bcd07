package lab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// A consumer-usage of the user's (--usage-cmd): the lab runs their
// command in place of the built-in one, hands it what it needs in five
// environment variables and nothing else, and observes it from outside:
// its life from the supervisor, its lag from its group's commits, its
// usage from the records it writes in a database of its own
// (docs/your-consumer.md).

// The environment a consumer of the user's is given.
const (
	EnvBroker   = "KAFKA_BROKER"
	EnvTopic    = "KAFKA_TOPIC"
	EnvGroup    = "KAFKA_GROUP"
	EnvInstance = "KAFKA_GROUP_INSTANCE_ID"
	EnvMongo    = "MONGO_URI"
)

// yoursEvery is how often the lab reads the records of the user's
// consumer at most: each read is a scan of all of them (no summaries).
const yoursEvery = 2 * time.Second

// yoursSuffix names the database of a consumer of the user's after the
// lab's own: nothing it writes can collide with the lab's.
const yoursSuffix = "_yours"

// yours reports whether consumer-usage is the user's command.
func (l *Lab) yours() bool { return len(l.cfg.UsageCmd) > 0 }

// yoursURI is the store's URI with the database of the user's consumer.
func yoursURI(mongo string) (string, error) {
	db, err := store.DatabaseOf(mongo)
	if err != nil {
		return "", err
	}
	return store.WithDatabase(mongo, db+yoursSuffix)
}

// yoursSpec is consumer-usage instance name as the user's command.
func (l *Lab) yoursSpec(name string) supervisor.Spec {
	brokers, mongo := l.Addresses()
	uri, err := yoursURI(mongo)
	if err != nil {
		uri = mongo // the store's own check reports it
	}
	return supervisor.Spec{Name: name, Program: l.cfg.UsageCmd[0], Args: slices.Clone(l.cfg.UsageCmd[1:]),
		PlainStdout: true, Tier: 1, Env: []string{
			EnvBroker + "=" + brokers,
			EnvTopic + "=" + l.cfg.Topic,
			EnvGroup + "=" + l.usageGroup(),
			// Static membership: an instance killed with -9 gets its
			// partitions back at its restart, not a session timeout later.
			EnvInstance + "=" + name,
			EnvMongo + "=" + uri,
		}}
}

// connectYours connects the lab to the database of the user's consumer.
func (l *Lab) connectYours(ctx context.Context, mongo string) error {
	if !l.yours() || l.yoursDB != nil {
		return nil
	}
	uri, err := yoursURI(mongo)
	if err != nil {
		return &launchError{"bad --mongo", fmt.Errorf("store: %w", err)}
	}
	if l.yoursDB, err = store.Connect(ctx, uri); err != nil {
		return &launchError{"bad --mongo", err}
	}
	return nil
}

// pollYoursUsage is pollUsage for a consumer of the user's: one scan of its
// records is the cut (it keeps no summaries), each sensor's window starts
// at the message before its first record (the reference its first delta
// was taken from), and the causes are attributed over all of its records
// at every cut (they carry no sequence a reader could resume from).
func (l *Lab) pollYoursUsage(ctx context.Context) {
	epoch, resetting := l.resetState()
	if resetting || l.yoursDB == nil || time.Now().Before(l.yoursNext) {
		return
	}
	asked := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	sc, err := l.yoursDB.ScanRecords(sctx)
	cancel()
	// A scan reads every record, and grows with them: the next one starts
	// yoursEvery after this one, or waits twice as long as this one took,
	// so the store spends at most a third of its time on them however many
	// there are.
	l.yoursNext = asked.Add(max(yoursEvery, 3*time.Since(asked)))
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.UsageSnapshot{At: asked, Err: err}
	if err != nil {
		l.emit(snap)
		return
	}
	snap.Malformed, snap.Example = sc.Malformed, sc.Example
	inferred := placeUnlocated(l.reader().Snapshot(), &sc)
	covered := sc.Coverage()
	firsts := map[string]store.Checkpoint{}
	for id, s := range sc.Sensors {
		if s.Located() {
			r := s.Records[0]
			// The message before the first record's is the reference of
			// its delta (ExpectedOver counts from the one after First).
			firsts[id] = store.Checkpoint{SensorID: id, FirstPartition: r.Partition, FirstOffset: r.Offset - 1}
		}
	}
	truth, cut := l.reader().TakeCut(ctx, 2*time.Second, covered, firsts)
	causes := audit.NewAttribution()
	records := map[string][]store.SensorRecord{}
	from, upTo := causes.Need(truth, cut)
	for id := range upTo {
		records[id] = sc.Sensors[id].Records[from[id]:upTo[id]]
	}
	attributed, bad := causes.Apply(truth, cut, from, records)
	var causesErr error
	if len(bad) > 0 {
		causesErr = fmt.Errorf("the causes of %s do not add up to the drift", strings.Join(bad, ", "))
	}
	for _, id := range slices.Sorted(maps.Keys(covered)) {
		line := usageLine(id, covered[id], cut[id])
		if line.Expect == board.ExpectReady {
			line.Causes, line.CausesErr = boardCauses(attributed[id]), causesErr
			for i := range line.Causes {
				line.Causes[i].Inferred = inferred[id]
			}
		}
		snap.Sensors = append(snap.Sensors, line)
	}
	if e, r := l.resetState(); r || e != epoch {
		return
	}
	l.emit(snap)
}

// placeUnlocated gives the records of every sensor that name no message
// the messages they most likely come from (audit.InferPlaces), in the
// sensor's one partition; it returns the sensors so placed. A sensor whose
// key was in several partitions keeps its records unplaced (no window).
func placeUnlocated(truth audit.Truth, sc *store.Scan) map[string]bool {
	placed := map[string]bool{}
	for id, ss := range sc.Sensors {
		if ss.Unlocated == 0 {
			continue
		}
		st, ok := truth.Sensor(id)
		if !ok || len(st.PartitionIDs) != 1 {
			continue
		}
		msgs := truth.Deltas(id, st.PartitionIDs[0])
		deltas := make([]store.Totals, len(ss.Records))
		for i, r := range ss.Records {
			deltas[i] = store.Totals{HoursCents: r.HoursCents, KmCents: r.KmCents}
		}
		var out store.ScannedSensor
		for i, at := range audit.InferPlaces(msgs, deltas) {
			if at < 0 {
				out = ss
				break
			}
			r := ss.Records[i]
			r.Partition, r.Offset = msgs[at].Partition, msgs[at].Offset
			out.Records = append(out.Records, r)
			out.Summary = out.Summary.Fold(store.UsageRecord{Partition: r.Partition, Offset: r.Offset,
				Usage: telemetry.Usage{DeltaHours: float64(r.HoursCents) / 100, DeltaKm: float64(r.KmCents) / 100}})
		}
		if out.Unlocated == 0 {
			sc.Sensors[id] = out
			placed[id] = true
		}
	}
	return placed
}
