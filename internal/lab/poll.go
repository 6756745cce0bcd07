package lab

import (
	"context"
	"errors"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/producer"
)

// poll runs f every period, or every twice f's own duration when that is
// longer: on the embedded store a usage scan costs ~0.13 ms per record
// (BenchmarkUsageTotals), so a long run must not turn the dashboard's polls
// into a busy loop that starves the processes it watches.
func (l *Lab) poll(ctx context.Context, every time.Duration, f func(context.Context)) {
	l.pollers.Add(1)
	go func() {
		defer l.pollers.Done()
		for {
			began := time.Now()
			f(ctx)
			wait := max(every-time.Since(began), time.Since(began))
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
}

func (l *Lab) pollOffsets(ctx context.Context) {
	var group string
	if l.yours() {
		group = l.usageGroup() // the one it was given: it says none
	} else {
		l.Observe(func(b *board.Board) {
			// A just-started consumer-usage has not said its group yet: keep
			// reading the last one's commits meanwhile.
			if group = b.Process(board.Usage).GroupID; group == "" {
				_, group, _ = b.Committed()
			}
		})
	}
	// Commits first, watermarks second, and the watermarks reach the board
	// first: a lag is then a watermark minus an older commit, never the
	// other way round. Read in the opposite order, a consumer committing
	// between the two reads showed a lag of 0 while it still had messages
	// to read (a crash point armed on "caught up" would
	// fire at once). Every sample is stamped with when it was asked for,
	// not answered: a sample stamped after an event (the producer's pause)
	// then really was read after it.
	var (
		committedAsked time.Time
		committed      map[int32]int64
		commitErr      error
	)
	if group != "" {
		committedAsked = time.Now()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		committed, commitErr = l.offsets.Committed(cctx, group, l.cfg.Topic)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.logReadError("committed offsets", commitErr)
	}
	asked := time.Now()
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	starts, hwm, err := l.offsets.Watermarks(hctx, l.cfg.Topic)
	cancel()
	if ctx.Err() != nil {
		return
	}
	l.logReadError("watermarks", err)
	l.emit(board.Offsets{At: asked, HighWatermarks: hwm, LogStarts: starts, Err: err})
	if group != "" {
		l.emit(board.Committed{At: committedAsked, Group: group, Offsets: committed, Err: commitErr})
	}
}

// logReadError writes a poll's failure to the lab's log when it differs
// from that poll's previous outcome: the board says a read failed, the log
// says why (an outage repeats the same error twice a second).
func (l *Lab) logReadError(what string, err error) {
	text := ""
	if err != nil {
		text = err.Error()
	}
	l.mu.Lock()
	prev, seen := l.readErrs[what]
	l.readErrs[what] = text
	l.mu.Unlock()
	switch {
	case err != nil && text != prev:
		l.log.Warn("reading the "+what+" failed", "err", err)
	case err == nil && seen && prev != "":
		l.log.Info("reading the " + what + " works again")
	}
}

// pollPartitions reads the topic's placement (leader, replicas, ISR,
// min.insync.replicas) and puts on each partition the sensors whose key
// the producer's partitioner sends there. Stamped with when it was asked.
func (l *Lab) pollPartitions(ctx context.Context) {
	asked := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	lay, err := l.offsets.Layout(pctx, l.cfg.Topic)
	cancel()
	if ctx.Err() != nil {
		return
	}
	l.logReadError("metadata", err)
	if err == nil && lay.MinISRErr != nil {
		l.log.Warn("min.insync.replicas unknown", "topic", l.cfg.Topic, "err", lay.MinISRErr)
	}
	l.emit(partitionsInput(asked, l.cfg.Topic, l.cfg.Sensors, lay, err))
}

// partitionsInput turns a layout read into the board's input, placing
// sensors 1..sensors with kafkacfg.PartitionFor.
func partitionsInput(asked time.Time, topic string, sensors int, lay observe.Layout, err error) board.Partitions {
	in := board.Partitions{At: asked, Topic: topic, MinISR: lay.MinISR, Err: err}
	if err != nil {
		return in
	}
	index := map[int32]int{}
	for _, p := range lay.Partitions {
		index[p.Partition] = len(in.Rows)
		in.Rows = append(in.Rows, board.PartitionMeta{Partition: p.Partition, Leader: p.Leader,
			Replicas: p.Replicas, ISR: p.ISR, Preferred: p.Preferred})
	}
	for i := range sensors {
		id := producer.SensorID(i, sensors)
		if j, ok := index[kafkacfg.PartitionFor(id, len(lay.Partitions))]; ok {
			in.Rows[j].Sensors = append(in.Rows[j].Sensors, id)
		}
	}
	return in
}

func (l *Lab) pollState(ctx context.Context) {
	addr := l.httpAddr(board.Current)
	if addr == "" {
		return
	}
	asked := time.Now()
	st, err := observe.FetchState(ctx, addr)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.SensorsSnapshot{At: asked, Err: err, CaughtUp: st.CaughtUp, Invalid: st.Invalid}
	for _, s := range st.Sensors {
		snap.Sensors = append(snap.Sensors, board.SensorState{SensorID: s.SensorID, Timestamp: s.Timestamp,
			HoursTot: s.Odometry.HoursTot, KmTot: s.Odometry.KmTot, Lat: s.Position.Lat, Lon: s.Position.Lon,
			Partition: s.Partition, Offset: s.Offset})
	}
	l.emit(snap)
}

// pollTruth hands the board the audit's view of each sensor's latest
// message and how far it has read (the usage comparison is in pollUsage).
func (l *Lab) pollTruth(ctx context.Context) {
	asked := time.Now()
	truth := l.reader().Snapshot()
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.TruthSnapshot{At: asked, AuditOffset: truth.Read(), AuditThrough: map[int32]int64{}, Moves: keyMoves(truth)}
	for _, p := range truth.Partitions {
		snap.AuditThrough[p.Partition] = p.Through()
	}
	for _, r := range truth.Skipped() {
		snap.Skipped = append(snap.Skipped, board.OffsetRange{Partition: r.Partition, First: r.First, Last: r.Last})
	}
	if truth.Err != "" {
		snap.Err = errors.New(truth.Err)
	}
	for _, st := range truth.Sensors {
		t := board.Truth{SensorID: st.SensorID, Partitions: st.PartitionIDs, Disordered: st.Disordered, Valid: st.Valid}
		if st.HasLast {
			m := st.Last.Message
			t.Last = &board.SensorState{SensorID: st.SensorID, Timestamp: m.Timestamp, HoursTot: m.Odometry.HoursTot,
				KmTot: m.Odometry.KmTot, Lat: m.Position.Lat, Lon: m.Position.Lon,
				Partition: st.Last.Partition, Offset: st.Last.Offset}
		}
		snap.Sensors = append(snap.Sensors, t)
	}
	l.emit(snap)
}
