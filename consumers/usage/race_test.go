package usage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// TestOwnersRace races four guarded owners of one partition on the
// embedded store, the way a group hands a partition on: owner i+1 is
// assigned (owner i revoked) while owner i may still have a batch in
// flight, and starts from an offset no further than what owner i
// completed (a commit is never ahead of completed work). Each owner applies
// the rest of the log in random batches, each held a random 0-2 ms (the
// effect delay), and takes no new batch once revoked; its batch in flight
// completes late, and is not in its commit. After the round a fresh owner resumes from the store.
//
// A regression is a round in which a reader polling the checkpoint saw it
// move back, or after which the resumed state is behind what was applied
// or off by any record: checkpoint offset not at the last message, totals
// not the log's, a message with other than one usage record. The store's
// guards are unique inserts and per-sensor seqs only, no compare-and-set;
// an owner writes a checkpoint only while it owns the partition, under the
// fence its revoke takes (Processor.Fence).
//
// KRL_RACE_ROUNDS overrides the suite's 300 rounds (1,000 and more by
// hand: README).
func TestOwnersRace(t *testing.T) {
	rounds := 300
	if s := os.Getenv("KRL_RACE_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		rounds = 50
	}
	_, st := freshDB(t)
	log := series(t, "s1", 12)
	want := deltas(11)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 1000))
	var regressions, late, prevented, movedBack int64
	began := time.Now()
	for round := range rounds {
		if err := st.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		seeds := [4]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
		var owner atomic.Int32        // the owner now: 0..3
		var completed [4]atomic.Int64 // each owner's commit
		var progressed, finished [4]atomic.Bool
		var wg sync.WaitGroup
		stopReader := make(chan struct{})
		readerMovedBack := make(chan int64, 1)
		go func() { readerMovedBack <- watchCheckpoint(st, "s1", stopReader) }()
		var procs [4]*Processor
		for i := range 4 {
			if i > 0 {
				// Hand over once the previous owner has applied something
				// (or finished): its next batch may be in flight.
				for !progressed[i-1].Load() && !finished[i-1].Load() {
					time.Sleep(100 * time.Microsecond)
				}
			}
			if i > 0 {
				procs[i-1].Fence(func() { owner.Store(int32(i)) })
			}
			p := newProcessorQuiet(t, st, lesson.Guarded)
			me := int32(i)
			p.cfg.Owned = func(int32) bool { return owner.Load() == me }
			p.cfg.EffectDelay = &EffectDelay{}
			procs[i] = p
			start := 0
			if i > 0 {
				// The committed offset, or anywhere before it (the
				// checkpoints make the replay of the rest a no-op).
				r := rand.New(rand.NewPCG(seeds[i], 1))
				start = r.IntN(int(completed[i-1].Load()) + 1)
			}
			completed[i].Store(int64(start))
			wg.Add(1)
			go func(i, start int) {
				defer wg.Done()
				defer finished[i].Store(true)
				r := rand.New(rand.NewPCG(seeds[i], 2))
				for at := start; at < len(log); {
					if owner.Load() != int32(i) {
						return // revoked: no new batch
					}
					n := min(1+r.IntN(4), len(log)-at)
					p.cfg.EffectDelay.Set(time.Duration(r.IntN(2000)) * time.Microsecond)
					if _, err := p.HandleBatch(ctx, log[at:at+n]); err != nil {
						t.Error(err)
						return
					}
					at += n
					// Its commit: a batch that completed after the revoke
					// is not in it (the loop stores no offset of a lost
					// partition); the next owner starts from it.
					if owner.Load() == int32(i) {
						completed[i].Store(int64(at))
					}
					progressed[i].Store(true)
				}
			}(i, start)
		}
		wg.Wait()
		close(stopReader)
		for _, p := range procs {
			late += p.Stats().Late
			prevented += p.Stats().Prevented
		}
		// The last owner never loses the partition, so it applied the log
		// to its end unless it started there... which it cannot, having
		// started no further than owner 3's completed prefix.
		err := checkResumed(t, st, want, len(log))
		back := <-readerMovedBack
		if err == nil && back > 0 {
			err = fmt.Errorf("a reader saw the checkpoint move back %d times", back)
		}
		if err != nil {
			regressions++
			t.Errorf("round %d: %v", round, err)
		}
		movedBack += back
	}
	t.Logf("%d rounds of 4 owners in %s: %d regressions (checkpoint seen moving back %d times); %d late writes, %d second effects refused",
		rounds, time.Since(began).Round(time.Millisecond), regressions, movedBack, late, prevented)
	if late == 0 || prevented == 0 {
		t.Errorf("no late write (%d) or no refused second effect (%d): the race this test is for did not happen", late, prevented)
	}
}

// checkResumed resumes from the store as a new owner would and checks it
// against the log: checkpoint at the last message, exact totals in the
// summary and in the records, one record per message with a delta.
func checkResumed(t *testing.T, st *store.Store, want store.Totals, messages int) error {
	ctx := context.Background()
	cps, err := st.ResumeCheckpoints(ctx)
	if err != nil {
		return err
	}
	cp := cps["s1"]
	if cp.Offset != int64(messages-1) {
		return fmt.Errorf("resumed at offset %d, want %d", cp.Offset, messages-1)
	}
	if got := cp.Summary.Covered().Totals; got != want {
		return fmt.Errorf("resumed summary %+v, want %+v", got, want)
	}
	tot, err := st.UsageTotals(ctx)
	if err != nil {
		return err
	}
	if tot["s1"] != want {
		return fmt.Errorf("records sum to %+v, want %+v", tot["s1"], want)
	}
	offs, err := st.UsageOffsets(ctx)
	if err != nil {
		return err
	}
	seen := map[int64]int{}
	for _, p := range offs["s1"] {
		seen[p.Offset]++
	}
	for off := int64(1); off < int64(messages); off++ {
		if seen[off] != 1 {
			return fmt.Errorf("offset %d has %d usage records", off, seen[off])
		}
	}
	return nil
}

// watchCheckpoint polls id's checkpoint until stop and counts the times
// its summary went back.
func watchCheckpoint(st *store.Store, id string, stop <-chan struct{}) int64 {
	var last, back int64
	for {
		select {
		case <-stop:
			return back
		default:
		}
		cps, err := st.LoadCheckpoints(context.Background())
		if err == nil {
			if n := cps[id].Summary.Records; n < last {
				back++
			} else {
				last = n
			}
		}
	}
}
