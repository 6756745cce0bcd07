package scenario

import (
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The conditions steps wait for. Each reads only an Observation.

var (
	// stackReady: everything runs and both panels are live, so a lesson
	// starts from a steady state.
	stackReady = &Cond{
		What: "every process running, consumers caught up, both panels live",
		Holds: func(o Observation) bool {
			for _, n := range []string{board.Producer, board.Current, board.Usage, board.Query} {
				if p, ok := o.Procs[n]; !ok || !p.Alive || p.Pending != "" {
					return false
				}
			}
			return o.CaughtUp && o.Sensors.Status == board.Live && usageAnswers(o) &&
				o.Usage.Truth == board.Live && everySensorHasWindow(o)
		},
	}

	// fleetFrozen: the producer is paused and consumer-current holds
	// exactly the topic's last message of every sensor.
	fleetFrozen = &Cond{
		What: "producer paused and consumer-current equal to the topic's last messages",
		Holds: func(o Observation) bool {
			prod := o.Proc(board.Producer)
			return prod.Alive && prod.Producer.Paused && o.CaughtUp && o.Sensors.Status == board.Live &&
				allMatchTruth(o) && o.Usage.AuditCount == o.HWMSum()
		},
	}

	currentDown = &Cond{
		What:  "consumer-current down",
		Holds: func(o Observation) bool { return !o.Proc(board.Current).Alive },
	}

	// currentRebuilt: the new incarnation reported CaughtUp and its state
	// is live again.
	currentRebuilt = &Cond{
		What: "consumer-current caught up and its state live again",
		Holds: func(o Observation) bool {
			c := o.Proc(board.Current)
			return c.Alive && c.Current.CaughtUp && o.Sensors.Status == board.Live && len(o.Sensors.Rows) > 0
		},
	}

	// usageResumed: consumer-usage runs, reported where it started reading
	// and its commits reached the log end again.
	usageResumed = &Cond{
		What: "consumer-usage caught up (its commits reached the log end)",
		Holds: func(o Observation) bool {
			_, known := o.Proc(board.Usage).ReadFrom()
			return o.UsageCaughtUp && known
		},
	}

	queryDown = &Cond{
		What: "the usage panel down",
		Holds: func(o Observation) bool {
			return !o.Proc(board.Query).Alive && o.Usage.Status == board.Down
		},
	}

	// queryAnswers: consumer-query's new incarnation answered.
	queryAnswers = &Cond{
		What:  "consumer-query answering again",
		Holds: usageAnswers,
	}
)

// usageAnswers: consumer-query runs and answered since it started.
func usageAnswers(o Observation) bool {
	q := o.Proc(board.Query)
	return q.Alive && o.Usage.Status == board.Live && !o.Usage.AsOf.Before(q.StartedAt)
}

func everySensorHasWindow(o Observation) bool {
	if len(o.Usage.Rows) == 0 {
		return false
	}
	for _, r := range o.Usage.Rows {
		if r.Expected == nil || r.Recorded == nil {
			return false
		}
	}
	return true
}

func allMatchTruth(o Observation) bool {
	if len(o.Sensors.Rows) == 0 {
		return false
	}
	for _, r := range o.Sensors.Rows {
		if r.Truth != board.TruthMatch {
			return false
		}
	}
	return true
}
