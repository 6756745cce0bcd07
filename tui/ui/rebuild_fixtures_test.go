package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// restartCurrent is a crash and a start of consumer-current at sec that
// rebuilds as e says and catches up after processed messages in ms.
func (s *scene) restartCurrent(pid int, sec float64, e status.Event, processed, ms, history int64) *scene {
	s.apply(board.ProcExited{Name: board.Current, PID: s.b.Process(board.Current).PID, At: at(sec), Signal: "SIGKILL"})
	s.apply(board.ProcStarted{Name: board.Current, PID: pid, At: at(sec + 0.1)})
	e.Type = status.Rebuild
	s.status(board.Current, sec+0.2, status.Event{Type: status.Prepares, Strategy: e.Strategy})
	s.status(board.Current, sec+0.2, e)
	s.status(board.Current, sec+0.3, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	return s.status(board.Current, sec+0.3, status.Event{Type: status.CaughtUp, Processed: processed, Millis: ms, History: history})
}

// sceneSnapshotRebuilt: consumer-current switched to snapshot (B),
// crashed, and restarted from its snapshot.
func sceneSnapshotRebuilt() *scene {
	s := sceneRunning()
	s.apply(board.Rebuild{At: at(60), Strategy: "snapshot"})
	s.status(board.Current, 60.1, status.Event{Type: status.Prepares, Strategy: "snapshot"})
	s.status(board.Current, 60.2, status.Event{Type: status.Prepared, Strategy: "snapshot", Sensors: nSensors})
	s.restartCurrent(4120, 62, status.Event{Strategy: "snapshot", SnapshotAt: at(60.2), Sensors: nSensors,
		Positions: []status.Position{{Partition: 0, Offset: 200}, {Partition: 1, Offset: 200}, {Partition: 2, Offset: 200}}}, 12, 41, 612)
	s.apply(board.SensorsSnapshot{At: at(64.2), CaughtUp: true, Sensors: sensorsAt(63, 64)})
	return s.tick(64.4)
}

// sceneCost: the rebuild-cost scenario after eight of its nine measures.
func sceneCost() *scene {
	s := sceneRunning()
	pid, sec := 4200, 10.0
	for _, m := range []struct {
		history                  int64
		replay, snapshot, chglog int64
	}{{10_000, 190, 41, 52}, {100_000, 520, 44, 58}, {1_000_000, 3400, 52, 0}} {
		for _, strategy := range []string{"replay", "snapshot", "changelog"} {
			e := status.Event{Strategy: strategy, Sensors: nSensors}
			var read, ms int64
			switch strategy {
			case "replay":
				read, ms = m.history, m.replay
			case "snapshot":
				e.SnapshotAt, ms = at(sec-1), m.snapshot
			case "changelog":
				e.Count, ms = 11, m.chglog
			}
			s.apply(board.Rebuild{At: at(sec - 0.5), Strategy: strategy})
			if ms == 0 {
				continue
			}
			s.restartCurrent(pid, sec, e, read, ms, m.history)
			pid++
			sec += 2
		}
	}
	return s
}

func progressCost() scenario.Progress {
	sc, _ := scenario.Lookup("rebuild-cost")
	i := len(sc.Steps) - 2 // changelog at 1,000,000
	st := sc.Steps[i]
	return scenario.Progress{Name: sc.Name, Title: sc.Title, Panel: sc.Panel, Step: i + 1, Steps: len(sc.Steps),
		StepTitle: st.Title, Say: st.Say, Watch: st.Watch, Waiting: st.Until.What, Checks: pending(sc)}
}

var costMsgs = []tea.Msg{Inputs{Narration{Step: progressCost()}}}
