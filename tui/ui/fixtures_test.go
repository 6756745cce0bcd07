package ui

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// Fixed clock and data so views are reproducible.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

var allProcs = []string{board.Producer, board.Current, board.Usage, board.Query, board.Broker, board.Store}

const nSensors = 10

func sensorID(i int) string { return fmt.Sprintf("sensor-%02d", i+1) }

// sensorAt is sensor i's state after n messages.
func sensorAt(i, n int, sec float64) board.SensorState {
	return board.SensorState{
		SensorID:  sensorID(i),
		Timestamp: at(sec - float64(i%4)).UnixMilli(),
		HoursTot:  float64(120+i*271) + float64(n)*0.13,
		KmTot:     float64(300+i*797) + float64(n)*0.41,
		Lat:       44.5 + float64(i)*0.137,
		Lon:       8.0 + float64(i)*0.411,
		Partition: kafkacfg.PartitionFor(sensorID(i), 3),
		Offset:    int64(n*nSensors/3 + i),
	}
}

func sensorsAt(n int, sec float64) []board.SensorState {
	out := make([]board.SensorState, nSensors)
	for i := range out {
		out[i] = sensorAt(i, n, sec)
	}
	return out
}

type scene struct {
	b   *board.Board
	sec float64
}

func newScene() *scene {
	b := board.New(allProcs, board.Config{RunDir: "/tmp/krl/run-20260301-100000"})
	return &scene{b: b}
}

func (s *scene) apply(ins ...any) *scene {
	for _, in := range ins {
		if bi, ok := in.(board.Input); !ok || !s.b.Apply(bi) {
			panic(fmt.Sprintf("not a board input: %T", in))
		}
	}
	return s
}

func (s *scene) tick(sec float64) *scene {
	s.sec = sec
	return s.apply(board.Tick{Now: at(sec)})
}

func (s *scene) status(name string, sec float64, e status.Event) *scene {
	return s.apply(board.ProcStatus{Name: name, At: at(sec), Event: e})
}

func hwm(total int64) map[int32]int64 {
	return map[int32]int64{0: total/3 + total%3, 1: total / 3, 2: total / 3}
}

// startup: the embedded broker and store are up, the rest was just spawned.
func sceneStartup() *scene {
	s := newScene().tick(0)
	s.apply(board.ProcStarted{Name: board.Broker, PID: 4101, At: at(0)})
	s.status(board.Broker, 0.3, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	s.apply(board.ProcStarted{Name: board.Store, PID: 4102, At: at(0)})
	s.status(board.Store, 0.4, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:37017"})
	for i, n := range []string{board.Current, board.Usage, board.Query, board.Producer} {
		s.apply(board.ProcStarted{Name: n, PID: 4110 + i, At: at(0.5)})
	}
	s.status(board.Usage, 0.7, status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: "127.0.0.1:39092", Error: "connection refused"})
	return s.tick(1)
}

// running: everything up for a while, consumers caught up, usage exact.
func sceneRunning() *scene {
	s := sceneStartup()
	s.status(board.Usage, 1.2, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"})
	s.status(board.Usage, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	s.status(board.Current, 1.2, status.Event{Type: status.Started, GroupID: "demo-current-1a2b3c4d"})
	s.status(board.Current, 1.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.6, status.Event{Type: status.CaughtUp, Processed: 0, Millis: 310})
	s.status(board.Usage, 1.7, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Query, 1.3, status.Event{Type: status.Listening, Endpoint: "http", Addr: "127.0.0.1:38080"})
	s.status(board.Producer, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	committed := int64(0)
	for sec := 2; sec <= 64; sec++ {
		total := int64(sec-1) * nSensors
		if sec%5 == 0 {
			committed = total - 3
		}
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage", Offsets: hwm(committed)})
		s.status(board.Producer, float64(sec), status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
		s.status(board.Current, float64(sec), status.Event{Type: status.Progress, Processed: total - 2, Positions: []status.Position{
			{Partition: 0, Offset: hwm(total)[0] - 2, HighWatermark: hwm(total)[0]},
			{Partition: 1, Offset: hwm(total)[1], HighWatermark: hwm(total)[1]},
			{Partition: 2, Offset: hwm(total)[2], HighWatermark: hwm(total)[2]},
		}})
	}
	s.apply(embeddedPartitions(64))
	n := 63
	s.apply(board.SensorsSnapshot{At: at(64), CaughtUp: true, Sensors: sensorsAt(n, 64)})
	s.apply(board.UsageSnapshot{At: at(64), Sensors: usageAt(n, nil)})
	s.apply(board.TruthSnapshot{At: at(64), AuditOffset: int64(n * nSensors), Sensors: truthAt(n, 64)})
	for _, name := range []string{board.Current, board.Usage} {
		s.apply(board.HealthProbe{Name: name, PID: s.b.Process(name).PID, At: at(64), Code: 200, Status: "ok", StuckAfter: 10 * time.Second})
	}
	return s.tick(64.4)
}

// sceneFrozenStuck: consumer-usage frozen (z), consumer-current answering
// its /healthz with 503 stuck.
func sceneFrozenStuck() *scene {
	s := sceneRunning()
	s.apply(board.Request{At: at(64.5), Name: board.Usage, Op: board.OpFreeze})
	s.apply(board.ProcFrozen{Name: board.Usage, PID: s.b.Process(board.Usage).PID, At: at(64.5), Frozen: true})
	s.apply(board.RequestDone{At: at(64.5), Name: board.Usage, Op: board.OpFreeze})
	s.apply(board.HealthProbe{Name: board.Current, PID: s.b.Process(board.Current).PID, At: at(65), Code: 503, Status: "stuck",
		StuckFor: 11 * time.Second, StuckAfter: 10 * time.Second})
	return s.tick(66)
}

// usageAt is what consumer-usage recorded after n messages per sensor, with
// extra cents added (positive: over-counted), in one cut with what the
// audit expects over those same messages.
func usageAt(n int, extra func(i int) (h, km float64)) []board.UsageTotals {
	out := make([]board.UsageTotals, nSensors)
	for i := range out {
		h, km := float64(n-2)*0.13, float64(n-2)*0.41
		if extra != nil {
			dh, dk := extra(i)
			h, km = h+dh, km+dk
		}
		out[i] = board.UsageTotals{SensorID: sensorID(i), HoursCents: store.Cents(h), KmCents: store.Cents(km), Records: int64(n - 2),
			Expect: board.ExpectReady, ExpectedHoursCents: store.Cents(float64(n-2) * 0.13), ExpectedKmCents: store.Cents(float64(n-2) * 0.41)}
	}
	return out
}

func truthAt(n int, sec float64) []board.Truth {
	out := make([]board.Truth, nSensors)
	for i := range out {
		last := sensorAt(i, n, sec)
		out[i] = board.Truth{SensorID: sensorID(i), Last: &last, Valid: int64(n),
			Partitions: []int32{int32(kafkacfg.PartitionFor(sensorID(i), 3))}}
	}
	return out
}

// usageCrashed: x on consumer-usage; it died by SIGKILL and the producer
// keeps going, so its lag grows poll after poll.
func sceneUsageCrashed() *scene {
	s := sceneRunning()
	s.apply(board.ProcLog{Name: board.Usage, At: at(64.5), Line: `time=10:01:04 level=INFO msg="checkpoint saved" sensor=sensor-03 offset=211`})
	s.apply(board.Request{At: at(64.6), Name: board.Usage, Op: board.OpCrash})
	s.apply(board.ProcExited{Name: board.Usage, PID: 4111, At: at(64.7), Signal: "SIGKILL", ExitCode: -1})
	committed := hwm(61*nSensors - 3)
	for sec := 65; sec <= 76; sec++ {
		total := int64(sec-1) * nSensors
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage", Offsets: committed})
		s.status(board.Producer, float64(sec), status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
		s.status(board.Current, float64(sec), status.Event{Type: status.Progress, Processed: total, Positions: []status.Position{
			{Partition: 0, Offset: hwm(total)[0], HighWatermark: hwm(total)[0]},
			{Partition: 1, Offset: hwm(total)[1], HighWatermark: hwm(total)[1]},
			{Partition: 2, Offset: hwm(total)[2], HighWatermark: hwm(total)[2]},
		}})
	}
	n := 75
	s.apply(board.SensorsSnapshot{At: at(76), CaughtUp: true, Sensors: sensorsAt(n, 76)})
	s.apply(board.UsageSnapshot{At: at(76), Sensors: usageAt(63, nil)})
	// consumer-usage is dead: its records are exact over what they cover,
	// while the audit reads on to the newest message.
	s.apply(board.TruthSnapshot{At: at(76), AuditOffset: int64(n * nSensors), Sensors: truthAt(n, 76)})
	return s.tick(76.3)
}

// replaying: consumer-current was crashed and restarted; it is 40% through
// the rebuild from earliest.
func sceneReplaying() *scene {
	s := sceneRunning()
	s.apply(board.Request{At: at(64.5), Name: board.Current, Op: board.OpCrash})
	s.apply(board.ProcExited{Name: board.Current, PID: 4110, At: at(64.6), Signal: "SIGKILL", ExitCode: -1})
	s.apply(board.Request{At: at(66), Name: board.Current, Op: board.OpStart})
	s.apply(board.ProcStarted{Name: board.Current, PID: 4190, At: at(66.1)})
	s.status(board.Current, 66.3, status.Event{Type: status.Started, GroupID: "demo-current-9f8e7d6c"})
	s.status(board.Current, 66.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	total := int64(66 * nSensors)
	h := hwm(total)
	s.tick(66.9)
	s.status(board.Current, 66.9, status.Event{Type: status.Progress, Processed: 264, Positions: []status.Position{
		{Partition: 0, Offset: 88, HighWatermark: h[0]},
		{Partition: 1, Offset: 88, HighWatermark: h[1]},
		{Partition: 2, Offset: 88, HighWatermark: h[2]},
	}})
	part := sensorsAt(26, 66.9)
	s.apply(board.SensorsSnapshot{At: at(66.9), CaughtUp: false, Sensors: part[:7]})
	s.apply(board.Offsets{At: at(67), HighWatermarks: h})
	return s.tick(67)
}

// drift: consumer-usage restarted naive with reset earliest: it replayed
// the topic and counted most sensors twice; one sensor lost a delta in a
// crash between the two writes.
func sceneDrift() *scene {
	s := sceneRunning()
	s.apply(board.Action{At: at(64.5), Text: "switch consumer-usage reset to earliest"})
	s.apply(board.Request{At: at(64.5), Name: board.Usage, Op: board.OpRestart})
	s.apply(board.ProcExited{Name: board.Usage, PID: 4111, At: at(64.8), Deliberate: true})
	s.apply(board.Mode{UsageReset: "earliest"})
	s.apply(board.ProcStarted{Name: board.Usage, PID: 4201, At: at(65)})
	s.status(board.Usage, 65.1, status.Event{Type: status.Started, Mode: "naive", Reset: "earliest", GroupID: "demo-usage-e1"})
	s.status(board.Usage, 65.3, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	for sec := 65; sec <= 70; sec++ {
		total := int64(sec-1) * nSensors
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage-e1", Offsets: hwm(total - 4)})
	}
	// Read twice, a few seconds apart: each cut is a verdict of its own.
	for _, sec := range []float64{66, 70} {
		n := int(sec) - 1
		s.apply(board.UsageSnapshot{At: at(sec), Sensors: usageAt(n, func(i int) (float64, float64) {
			switch {
			case i == 6:
				return -0.13, -0.41
			case i%3 == 0:
				return 0, 0
			}
			return float64(n-2) * 0.13, float64(n-2) * 0.41
		})})
		s.apply(board.TruthSnapshot{At: at(sec), AuditOffset: int64(n * nSensors), Sensors: truthAt(n, sec)})
		s.apply(board.SensorsSnapshot{At: at(sec), CaughtUp: true, Sensors: sensorsAt(n, sec)})
	}
	return s.tick(70.2)
}

// down: consumer-current crashed by itself (exit 1) and consumer-query was
// killed: both panels say so, and the sensor values are marked stale.
func sceneDown() *scene {
	s := sceneRunning()
	s.apply(board.ProcLog{Name: board.Current, At: at(64.8), Line: `time=10:01:04.800 level=ERROR msg="fetch failed" err="broker: connection reset"`})
	s.apply(board.ProcLog{Name: board.Current, At: at(64.9), Line: `panic: unexpected nil state`})
	s.apply(board.ProcExited{Name: board.Current, PID: 4110, At: at(65), ExitCode: 2})
	s.apply(board.Request{At: at(65.5), Name: board.Query, Op: board.OpCrash})
	s.apply(board.ProcExited{Name: board.Query, PID: 4112, At: at(65.6), Signal: "SIGKILL"})
	s.apply(board.UsageSnapshot{At: at(66), Err: errors.New("connection refused")})
	s.apply(board.SensorsSnapshot{At: at(66), Err: errors.New("connection refused")})
	return s.tick(67)
}

// fakeController records calls; its answers are scripted per operation.
// Like the lab, it tells the board what it does only through inputs it
// emits (Request, RequestDone, status events); the test harness feeds them
// to the model as the dashboard does with the lab's Inputs.
type fakeController struct {
	mu     sync.Mutex
	calls  []string
	fail   map[string]error
	tail   []string
	inputs []board.Input

	paused  bool
	armed   lesson.CrashPoint
	mode    lesson.Mode
	reset   lesson.Reset
	rebuild string
	acks    lesson.Acks
}

func (f *fakeController) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	op := call
	for i, r := range call {
		if r == ' ' {
			op = call[:i]
			break
		}
	}
	return f.fail[op]
}

func (f *fakeController) emit(in board.Input) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
}

// takeInputs returns the inputs emitted since the last call.
func (f *fakeController) takeInputs() []board.Input {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.inputs
	f.inputs = nil
	return in
}

func (f *fakeController) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeController) act(name, op string) error {
	f.emit(board.Request{At: at(70), Name: name, Op: op})
	err := f.record(op + " " + name)
	f.emit(board.RequestDone{At: at(70), Name: name, Op: op, Err: err})
	return err
}

func (f *fakeController) Crash(name string) error   { return f.act(name, board.OpCrash) }
func (f *fakeController) Stop(name string) error    { return f.act(name, board.OpStop) }
func (f *fakeController) Start(name string) error   { return f.act(name, board.OpStart) }
func (f *fakeController) Restart(name string) error { return f.act(name, board.OpRestart) }
func (f *fakeController) TogglePause() (bool, error) {
	f.paused = !f.paused
	if f.paused {
		return true, f.record("pause")
	}
	return false, f.record("resume")
}
func (f *fakeController) CycleRebuild() (string, error) {
	f.rebuild = string(lesson.Rebuild(f.rebuild).Next())
	err := f.record("rebuild " + f.rebuild)
	if err == nil {
		f.emit(board.Rebuild{At: at(70), Strategy: f.rebuild})
	}
	return f.rebuild, err
}

func (f *fakeController) ArmCrash(name, point string) error {
	f.armed = lesson.CrashPoint(point)
	err := f.record("arm " + name + " " + point)
	if err == nil {
		f.emit(board.ProcStatus{Name: name, At: at(70), Event: status.Event{Type: status.CrashPointArmed, Point: point}})
	}
	return err
}
func (f *fakeController) ToggleUsageMode() (string, bool, error) {
	f.mode = lesson.Mode(orDefault(string(f.mode), string(lesson.Naive))).Other()
	f.emit(board.Mode{At: at(70), UsageMode: string(f.mode)})
	return string(f.mode), true, f.record("mode " + string(f.mode))
}
func (f *fakeController) ToggleUsageReset() (string, bool, error) {
	f.reset = lesson.Reset(orDefault(string(f.reset), string(lesson.Latest))).Other()
	f.emit(board.Mode{At: at(70), UsageReset: string(f.reset)})
	return string(f.reset), true, f.record("reset " + string(f.reset))
}
func (f *fakeController) ResetLab() error { return f.record("reset-lab") }
func (f *fakeController) ToggleAcks() (string, error) {
	f.acks = lesson.Acks(orDefault(string(f.acks), string(lesson.AcksAll))).Other()
	f.emit(board.AcksSetting{At: at(70), Acks: string(f.acks)})
	return string(f.acks), f.record("acks " + string(f.acks))
}
func (f *fakeController) Scale(n int) error {
	err := f.record(fmt.Sprintf("scale %d", n))
	if err == nil {
		for i := 2; i <= n; i++ {
			f.emit(board.ProcAdded{Name: board.UsageInstance(i), At: at(70)})
		}
		for i := n + 1; i <= board.MaxUsageInstances; i++ {
			f.emit(board.ProcRemoved{Name: board.UsageInstance(i), At: at(70)})
		}
	}
	return err
}
func (f *fakeController) ToggleFreeze(name string) (bool, error) {
	return true, f.record("freeze " + name)
}

func (f *fakeController) InjectBad(n int) (int, error) {
	return 9, f.record(fmt.Sprintf("inject-bad %d", n))
}
func (f *fakeController) Tail(name string, n int) []string {
	_ = f.record("tail " + name)
	return append([]string(nil), f.tail...)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

var errNoSuchProcess = errors.New("no such process")

// scenePoison is sceneRunning after the producer injected one malformed
// record of every kind: both consumers skipped them, each with a reason.
func scenePoison() *scene {
	s := sceneRunning()
	s.status(board.Producer, 64.5, status.Event{Type: status.BadInjected, Injected: 9})
	reasons := []string{"not-json: value is not JSON: \"sensor sensor-01 says hello, not JSON\"",
		"key-mismatch: key \"sensor-10\" does not match sensor_id \"sensor-09\""}
	for i, r := range reasons {
		s.status(board.Current, 64.6, status.Event{Type: status.InvalidMessage, Partition: 2, Offset: int64(300 + i), Error: r})
		s.status(board.Usage, 64.7, status.Event{Type: status.InvalidMessage, Partition: 2, Offset: int64(300 + i), Error: r})
	}
	s.status(board.Current, 64.8, status.Event{Type: status.Progress, Processed: 630, Invalid: 9})
	s.status(board.Usage, 64.9, status.Event{Type: status.Progress, Processed: 627, Invalid: 9})
	return s.tick(65)
}

// partitionsOf is a metadata read of a 3-partition topic with nSensors
// placed by the producer's partitioner.
func partitionsOf(sec float64, minISR int, rows ...board.PartitionMeta) board.Partitions {
	for i := range nSensors {
		id := sensorID(i)
		p := kafkacfg.PartitionFor(id, 3)
		rows[p].Sensors = append(rows[p].Sensors, id)
	}
	return board.Partitions{At: at(sec), Topic: "sensor-data", MinISR: minISR, Rows: rows}
}

func pmeta(p, leader int32, replicas, isr []int32) board.PartitionMeta {
	return board.PartitionMeta{Partition: p, Leader: leader, Replicas: replicas, ISR: isr}
}

// embeddedPartitions: what the embedded kfake broker answers: node 0
// leads everything, one replica, min.insync.replicas 1.
func embeddedPartitions(sec float64) board.Partitions {
	one := []int32{0}
	return partitionsOf(sec, 1, pmeta(0, 0, one, one), pmeta(1, 0, one, one), pmeta(2, 0, one, one))
}

// sceneFailover: a three-broker cluster (rows broker-1..3); broker-2 was
// killed (its partition 1 moved to broker 3), then broker-3: the ISR is
// [1] < min.insync.replicas 2 and the producer is blocked.
func sceneFailover() *scene {
	procs := []string{board.Producer, board.Current, board.Usage, board.Query, "broker-1", "broker-2", "broker-3", board.Store}
	s := &scene{b: board.New(procs, board.Config{RunDir: "/tmp/krl/run-20260301-100000", Topic: "sensor-data",
		Brokers: "127.0.0.1:39092,127.0.0.1:39093,127.0.0.1:39094"})}
	s.tick(0)
	for i, n := range []string{"broker-1", "broker-2", "broker-3"} {
		s.apply(board.ProcStarted{Name: n, PID: 4101 + i, At: at(0)})
		s.status(n, 0.3, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: fmt.Sprintf("127.0.0.1:%d", 39092+i)})
	}
	s.apply(board.ProcStarted{Name: board.Store, PID: 4104, At: at(0)})
	s.status(board.Store, 0.4, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:37017"})
	for i, n := range []string{board.Current, board.Usage, board.Query, board.Producer} {
		s.apply(board.ProcStarted{Name: n, PID: 4110 + i, At: at(0.5)})
	}
	s.status(board.Usage, 1.2, status.Event{Type: status.Started, Mode: "guarded", Reset: "latest", GroupID: "demo-usage"})
	s.status(board.Usage, 1.7, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.6, status.Event{Type: status.CaughtUp, Processed: 0, Millis: 310})
	s.status(board.Query, 1.3, status.Event{Type: status.Listening, Endpoint: "http", Addr: "127.0.0.1:38080"})
	s.status(board.Producer, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	all := []int32{1, 2, 3}
	s.apply(partitionsOf(1, 2, pmeta(0, 1, all, all), pmeta(1, 2, all, all), pmeta(2, 3, all, all)))
	for sec := 2; sec <= 64; sec++ {
		total := int64(min(sec, 62)-1) * nSensors
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage", Offsets: hwm(total - 3)})
		s.status(board.Producer, float64(sec), status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
	}
	s.apply(board.ProcExited{Name: "broker-2", PID: 4102, At: at(50), Signal: "SIGKILL"})
	s.apply(partitionsOf(50.2, 2, pmeta(0, 1, all, all), pmeta(1, -1, all, all), pmeta(2, 3, all, all)))
	s.apply(partitionsOf(50.6, 2, pmeta(0, 1, all, []int32{1, 3}), pmeta(1, 3, all, []int32{1, 3}), pmeta(2, 3, all, []int32{1, 3})))
	s.apply(board.ProcExited{Name: "broker-3", PID: 4103, At: at(60), Signal: "SIGKILL"})
	one := []int32{1}
	s.apply(partitionsOf(60.5, 2, pmeta(0, 1, all, one), pmeta(1, 1, all, one), pmeta(2, 1, all, one)))
	s.status(board.Producer, 63, status.Event{Type: status.Blocked, Count: 30, Millis: 2600,
		Error: "NOT_ENOUGH_REPLICAS (Broker: Not enough in-sync replicas)"})
	s.apply(partitionsOf(64, 2, pmeta(0, 1, all, one), pmeta(1, 1, all, one), pmeta(2, 1, all, one)))
	n := 61
	s.apply(board.SensorsSnapshot{At: at(64), CaughtUp: true, Sensors: sensorsAt(n, 64)})
	s.apply(board.UsageSnapshot{At: at(64), Sensors: usageAt(n, nil)})
	s.apply(board.TruthSnapshot{At: at(64), AuditOffset: int64(n * nSensors), Sensors: truthAt(n, 64)})
	return s.tick(64.4)
}
