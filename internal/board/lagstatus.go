package board

// LagStatus is a consumer's lag judged over a window of samples, the way
// Burrow judges a consumer group: by what its offsets and its lag do, not
// by the lag's size. A steady lag of one interval's messages is a consumer
// keeping up, not an alarm.
type LagStatus string

const (
	// LagUnjudged: fewer known samples than the window yet.
	LagUnjudged LagStatus = ""
	// LagOK: the lag touched 0 in the window, or the offsets advance and
	// the lag does not keep growing.
	LagOK LagStatus = "OK"
	// LagWarn: the offsets advance, but the lag grew through the whole
	// window, by more than one interval's messages (what is in flight as a
	// consumer keeps up): the consumer falls behind.
	LagWarn LagStatus = "WARN"
	// LagStall: the offsets did not move through the window while the lag
	// stayed above 0: the consumer is alive and consumes nothing (frozen,
	// stuck on the store, holding no partition).
	LagStall LagStatus = "STALL"
	// LagStop: the consumer is gone (crashed or stopped).
	LagStop LagStatus = "STOP"
)

// StatusWindow is how many samples (one a second) a status is judged over.
const StatusWindow = 10

// lagSample is one second's lag and offsets consumed (-1: unknown).
type lagSample struct{ lag, consumed int64 }

// judgeLag is the status of a consumer whose latest samples are window
// (oldest first), alive or not; inFlight is one interval's messages, a
// growth the lag may show without the consumer falling behind.
func judgeLag(alive bool, window []lagSample, inFlight int64) LagStatus {
	if !alive {
		return LagStop
	}
	if len(window) < StatusWindow {
		return LagUnjudged
	}
	window = window[len(window)-StatusWindow:]
	for _, s := range window {
		if s.lag < 0 || s.consumed < 0 {
			return LagUnjudged
		}
	}
	for _, s := range window {
		if s.lag == 0 {
			return LagOK
		}
	}
	first, last := window[0], window[len(window)-1]
	if last.consumed <= first.consumed {
		return LagStall
	}
	for i := 1; i < len(window); i++ {
		if window[i].lag < window[i-1].lag {
			return LagOK // it caught up some of it within the window
		}
	}
	if last.lag-first.lag > inFlight {
		return LagWarn
	}
	return LagOK
}

// consumed is how far name has consumed, summed over its partitions:
// consumer-usage's committed offsets (an instance's over the partitions it
// holds), consumer-current's positions; -1 when not known.
func (b *Board) consumed(name string) int64 {
	p := b.procs[name]
	if p == nil {
		return -1
	}
	if !IsUsage(name) {
		if len(p.positions) == 0 {
			return -1
		}
		var n int64
		for _, pos := range p.positions {
			n += max(0, pos.Offset)
		}
		return n
	}
	if !b.commitsApply() {
		return -1
	}
	var n int64
	for part, c := range b.committed {
		if b.Scaled() && !holds(p.usage.partitions, part) {
			continue
		}
		n += max(0, c)
	}
	return n
}

func holds(parts []int32, part int32) bool {
	for _, p := range parts {
		if p == part {
			return true
		}
	}
	return false
}

// lagStatus is name's status now, from its latest samples.
func (b *Board) lagStatus(name string) LagStatus {
	p := b.procs[name]
	if p == nil || p.starts == 0 || !b.lagOf(name).Applies {
		return LagUnjudged // nothing to judge before its first start
	}
	if p.frozen && p.alive() {
		return LagStall // SIGSTOPped: it consumes nothing, known at once
	}
	return judgeLag(p.alive(), b.statusHist[name], int64(max(b.fleet, 1)))
}

// Fleet is the producer's sensors as its progress says (0 before it does):
// the messages one interval adds to the topic.
func (b *Board) Fleet() int { return b.fleet }
