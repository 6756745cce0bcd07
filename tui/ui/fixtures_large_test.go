package ui

import (
	"errors"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// The largest values the layout is designed for: 99,999.99 h / km per
// sensor, 99,999 records, a lag of 99,999 messages, 7-digit pids.
const (
	bigAmount  = 99999.99
	bigRecords = 99999
)

// bigStack: every process up for 99 hours with 7-digit pids, both
// consumers far behind, and usage at the largest values: exact on most
// sensors, one over-counted and one lost by the whole amount.
func bigStack() *scene {
	s := newScene().tick(0)
	for i, n := range allProcs {
		s.apply(board.ProcStarted{Name: n, PID: 4194301 - i, At: at(0)})
	}
	s.status(board.Broker, 0.1, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	s.status(board.Store, 0.1, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:37017"})
	s.status(board.Query, 0.2, status.Event{Type: status.Listening, Endpoint: "http", Addr: "127.0.0.1:38080"})
	s.status(board.Usage, 0.2, status.Event{Type: status.Started, Mode: "guarded", Reset: "earliest", GroupID: "demo-usage-earliest-0123456789abcdef"})
	s.status(board.Usage, 0.3, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 0.3, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 0.4, status.Event{Type: status.CaughtUp, Processed: 0, Millis: 12})
	s.status(board.Producer, 0.4, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	end := 99*3600.0 + 59*60
	total := int64(999_999)
	h := hwm(total)
	// The lag history: a minute of samples, the last ones growing.
	for k := 0; k < 70; k++ {
		sec := end - 70 + float64(k)
		s.tick(sec)
		s.apply(board.Offsets{At: at(sec), HighWatermarks: h})
		s.apply(board.Committed{At: at(sec), Group: "demo-usage-earliest-0123456789abcdef", Offsets: hwm(total - int64(k*k*20))})
		s.status(board.Current, sec, status.Event{Type: status.Progress, Processed: total - 99_999, Positions: []status.Position{
			{Partition: 0, Offset: h[0] - 99_999, HighWatermark: h[0]},
			{Partition: 1, Offset: h[1], HighWatermark: h[1]},
			{Partition: 2, Offset: h[2], HighWatermark: h[2]},
		}})
	}
	s.status(board.Producer, end, status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
	sensorsBig := make([]board.SensorState, nSensors)
	for i := range sensorsBig {
		sensorsBig[i] = board.SensorState{SensorID: sensorID(i), Timestamp: at(end - 1).UnixMilli(),
			HoursTot: bigAmount, KmTot: bigAmount, Lat: -89.9999, Lon: -179.9999, Partition: int32(i % 3), Offset: int64(i)}
	}
	usage := make([]board.UsageTotals, nSensors)
	truth := make([]board.Truth, nSensors)
	for i := range usage {
		usage[i] = board.UsageTotals{SensorID: sensorID(i), HoursCents: store.Cents(bigAmount), KmCents: store.Cents(bigAmount), Records: bigRecords,
			Expect: board.ExpectReady, ExpectedHoursCents: store.Cents(bigAmount), ExpectedKmCents: store.Cents(bigAmount)}
		last := sensorsBig[i]
		truth[i] = board.Truth{SensorID: sensorID(i), Last: &last}
	}
	usage[2].ExpectedHoursCents, usage[2].ExpectedKmCents = 0, 0 // over-counted by the whole amount
	usage[5].HoursCents, usage[5].KmCents = 0, 0                 // lost the whole amount
	// Read twice, seconds apart: each cut is a verdict of its own.
	for _, sec := range []float64{end - 5, end} {
		s.apply(board.SensorsSnapshot{At: at(sec), CaughtUp: true, Sensors: sensorsBig})
		s.apply(board.UsageSnapshot{At: at(sec), Sensors: usage})
		s.apply(board.TruthSnapshot{At: at(sec), AuditOffset: total, Sensors: truth})
	}
	return s.tick(end + 0.5)
}

// sceneStatesA: the largest values, and six states at once: paused,
// replaying, crashed by an exit code, retrying a dependency, stopping and
// crashing; a long event last.
func sceneStatesA() *scene {
	s := bigStack()
	end := s.sec
	s.status(board.Producer, end, status.Event{Type: status.Paused})
	s.apply(board.Request{At: at(end), Name: board.Current, Op: board.OpRestart})
	s.apply(board.ProcExited{Name: board.Current, PID: 4194300, At: at(end + 0.1), Deliberate: true})
	s.apply(board.ProcStarted{Name: board.Current, PID: 4194290, At: at(end + 0.2)})
	s.status(board.Current, end+0.3, status.Event{Type: status.Progress, Processed: 400_000, Positions: []status.Position{
		{Partition: 0, Offset: 133_334, HighWatermark: 333_334},
		{Partition: 1, Offset: 133_333, HighWatermark: 333_333},
		{Partition: 2, Offset: 133_333, HighWatermark: 333_333},
	}})
	s.apply(board.ProcExited{Name: board.Usage, PID: 4194299, At: at(end + 0.3), ExitCode: 255})
	s.status(board.Query, end+0.3, status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: "127.0.0.1:37017", Error: "server selection error: context deadline exceeded, current topology: { Type: Unknown, Servers: [{ Addr: 127.0.0.1:37017, Type: Unknown, Last error: dial tcp 127.0.0.1:37017: connect: connection refused }] }"})
	s.apply(board.Request{At: at(end + 0.4), Name: board.Broker, Op: board.OpStop})
	s.apply(board.Request{At: at(end + 0.4), Name: board.Store, Op: board.OpCrash})
	s.apply(board.Offsets{At: at(end + 0.45), HighWatermarks: hwm(999_999)}) // read after the pause
	return s.tick(end + 0.5)
}

// sceneStatesB: the other states: stopped, crashed by a signal,
// restarting, starting, with the largest values still on screen.
func sceneStatesB() *scene {
	s := bigStack()
	end := s.sec
	s.apply(board.Request{At: at(end), Name: board.Producer, Op: board.OpStop})
	s.apply(board.ProcExited{Name: board.Producer, PID: 4194301, At: at(end + 0.1), Deliberate: true})
	s.apply(board.ProcExited{Name: board.Current, PID: 4194300, At: at(end + 0.1), Signal: "SIGKILL"})
	s.apply(board.Request{At: at(end + 0.2), Name: board.Usage, Op: board.OpRestart})
	s.apply(board.Request{At: at(end + 0.2), Name: board.Query, Op: board.OpRestart})
	s.apply(board.ProcExited{Name: board.Query, PID: 4194298, At: at(end + 0.3), Deliberate: true})
	s.apply(board.ProcStarted{Name: board.Query, PID: 4194280, At: at(end + 0.4)})
	s.apply(board.ProcExited{Name: board.Store, PID: 4194296, At: at(end + 0.4), Signal: "SIGSEGV"})
	s.apply(board.UsageSnapshot{At: at(end + 0.4), Err: errors.New("connection refused")})
	s.apply(board.Offsets{At: at(end + 0.45), HighWatermarks: hwm(999_999)}) // read after the stop
	return s.tick(end + 0.5)
}
