package lab

import (
	"context"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// checkpointsMaxAge bounds how long pollUsage goes on from one read of
// consumer-usage's checkpoints.
const checkpointsMaxAge = 10 * time.Second

// checkpointRead is pollUsage's last read of consumer-usage's checkpoints
// (its goroutine only). A usage cut needs of them which sensors have one
// and each one's first message: written once, when the checkpoint is made
// ($setOnInsert), and removed only by a reset-lab's drop. So within one
// reset epoch a read stays true of every sensor in it, and a cut can take
// it instead of reading every checkpoint again each second (on FerretDB a
// read of ten checkpoints is some 2 ms of the store's CPU, and each lab
// made two a second, with consumer-query's).
type checkpointRead struct {
	epoch int
	at    time.Time
	cps   map[string]store.Checkpoint
}

// current: the read serves a cut in epoch taken now over covered (the
// sensors consumer-query counts): same epoch, every counted sensor in it,
// as many checkpoints as the producer has sensors (until then a sensor may
// have one and no record yet, which a cut shows too), and younger than
// checkpointsMaxAge (any other sensor that has one by then).
func (r checkpointRead) current(epoch int, covered map[string]store.Covered, sensors int, now time.Time) bool {
	if r.cps == nil || r.epoch != epoch || len(r.cps) < sensors || now.Sub(r.at) >= checkpointsMaxAge {
		return false
	}
	for id := range covered {
		if _, ok := r.cps[id]; !ok {
			return false
		}
	}
	return true
}

// checkpoints is consumer-usage's checkpoints for a cut in epoch over
// covered: the last read if it is current, else a new one.
func (l *Lab) checkpoints(ctx context.Context, epoch int, covered map[string]store.Covered) (map[string]store.Checkpoint, error) {
	now := time.Now()
	if l.cpRead.current(epoch, covered, l.cfg.Sensors, now) {
		return l.cpRead.cps, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cps, err := l.db.LoadCheckpoints(cctx)
	if err != nil {
		l.cpRead = checkpointRead{}
		return nil, err
	}
	l.cpRead = checkpointRead{epoch: epoch, at: now, cps: cps}
	return cps, nil
}
