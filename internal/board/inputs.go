package board

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// The inputs below are the board's general ones; the inputs of one concern
// (health, acks, scale, moves, rebuild) live beside it. protocol.go lists
// every input and says which are urgent.

// ProcStarted: the supervisor spawned a child.
type ProcStarted struct {
	Name string
	PID  int
	At   time.Time
}

// ProcExited: a child ended. Deliberate is true when the supervisor stopped
// it on purpose (s, restart, quit); a SIGKILL from the x key is a crash and
// is NOT deliberate. Signal is the terminating signal name ("SIGKILL"), empty
// when the process exited by itself with ExitCode.
type ProcExited struct {
	Name       string
	PID        int
	At         time.Time
	ExitCode   int
	Signal     string
	Deliberate bool
}

// ProcStatus: one status event a child wrote on stdout.
type ProcStatus struct {
	Name  string
	At    time.Time
	Event status.Event
}

// ProcLog: one line a child wrote on stderr (or a non-event stdout line).
type ProcLog struct {
	Name string
	At   time.Time
	Line string
}

// Offsets: the topic's log-end offsets (high watermarks) per partition,
// and the log starts read just before them.
type Offsets struct {
	At             time.Time
	HighWatermarks map[int32]int64
	// LogStarts: the log start offsets read with them (nil: not read).
	LogStarts map[int32]int64
	Err       error
}

// Committed: the committed offsets of consumer-usage's group. A partition
// without a commit is -1 or absent; a group the broker does not know
// (kfake's GROUP_ID_NOT_FOUND, see observe.Offsets.Committed) is an empty map
// with a nil Err.
type Committed struct {
	At      time.Time
	Group   string
	Offsets map[int32]int64
	Err     error
}

// SensorState is one sensor's state as consumer-current (or the audit) holds it.
type SensorState struct {
	SensorID  string
	Timestamp int64 // epoch milliseconds of the message
	HoursTot  float64
	KmTot     float64
	Lat       float64
	Lon       float64
	Partition int32
	Offset    int64
}

// SensorsSnapshot: one poll of consumer-current's GET /state.
type SensorsSnapshot struct {
	At       time.Time
	Sensors  []SensorState
	CaughtUp bool
	Invalid  int64
	Err      error
}

// UsageTotals: one sensor's line of a usage cut: what consumer-query
// answered for it, and what the audit expects over exactly the records that
// answer covers.
type UsageTotals struct {
	SensorID string
	// HoursCents and KmCents: the totals in hundredths, exact (Hours and
	// Km convert them where they are shown).
	HoursCents int64
	KmCents    int64
	Records    int64
	// Partition and Offset: the furthest usage record the totals include,
	// from the same read as the totals (meaningful when Records > 0).
	Partition int32
	Offset    int64
	// Expect says what the audit could say about exactly these records;
	// with ExpectReady, ExpectedHoursCents and ExpectedKmCents are the
	// seed's rule over the messages after consumer-usage's first checkpoint
	// of the sensor through Partition/Offset.
	Expect             Expectation
	ExpectedHoursCents int64
	ExpectedKmCents    int64
	// Causes are the messages whose records differ from what the topic
	// yields for them, over the same cut (with ExpectReady; their drifts
	// add up to the line's). CausesErr: they could not be read.
	Causes    []Cause
	CausesErr error
}

// Cause is one message of a sensor's drift (audit.Cause, in the board's
// words): Kind is one of the CauseKinds.
type Cause struct {
	Kind      string
	Partition int32
	Offset    int64
	// Records: how many usage records the message has; Writer wrote the
	// latest (its instance and start), from its reading of BaseTimestamp
	// (epoch ms, 0 unknown).
	Records            int
	Writer             string
	BaseTimestamp      int64
	RecordedHoursCents int64
	RecordedKmCents    int64
	ExpectedHoursCents int64
	ExpectedKmCents    int64
	// Inferred: the record named no message; this one was matched to it
	// by its delta (audit.InferPlaces): likely, not certain.
	Inferred bool
}

// Drift is the cause's share of its sensor's drift.
func (c Cause) Drift() Drift {
	return Drift{HoursCents: c.RecordedHoursCents - c.ExpectedHoursCents, KmCents: c.RecordedKmCents - c.ExpectedKmCents}
}

// Expectation is what the audit could say about a UsageTotals line.
type Expectation int

const (
	// ExpectNone: no window (consumer-usage has no checkpoint of the
	// sensor, or its records do not fit one), so nothing can be compared.
	ExpectNone Expectation = iota
	// ExpectPending: the audit has not yet read as far as the furthest
	// record; the comparison waits for it.
	ExpectPending
	// ExpectReady: ExpectedHoursCents and ExpectedKmCents are known.
	ExpectReady
)

// UsageSnapshot: one cut of the usage: consumer-query's GET /usage answer
// (Err when it failed) and, per sensor, the audit's expectation over
// exactly the records that answer covered, computed together so that
// recorded and expected never come from two different moments.
type UsageSnapshot struct {
	At      time.Time
	Sensors []UsageTotals
	Err     error
	// ExpectErr: the expectations could not be computed (consumer-usage's
	// checkpoints were unreadable); every line is then ExpectNone.
	ExpectErr error
	// Malformed: the records of a consumer of the user's that break the
	// schema, by reason, with one of each (Example): never summed.
	Malformed map[string]int
	Example   map[string]string
}

// Truth: what the independent audit of the topic says about one sensor's
// latest valid message (nil when it has none).
type Truth struct {
	SensorID string
	Last     *SensorState
	// Partitions are the partitions the audit read the sensor's records
	// from (one, when the key decides the partition); Disordered counts its
	// records not later than the previous one of the key (duplicates or
	// reorderings: 0 when the key's order held); Valid counts its valid
	// records.
	Partitions []int32
	Disordered int64
	Valid      int64
}

// TruthSnapshot: the audit's state after reading the topic up to AuditOffset
// messages.
type TruthSnapshot struct {
	At          time.Time
	Sensors     []Truth
	AuditOffset int64
	// AuditThrough is, per partition, the offset after the last record the
	// audit had read (nil when unknown).
	AuditThrough map[int32]int64
	// Moves: the keys the audit found moved to another partition, by
	// sensor, each in the key's order.
	Moves []KeyMove
	// Skipped: the offsets deleted (retention) before the audit read them,
	// by partition then offset: its counts and expected usage lack them.
	Skipped []OffsetRange
	Err     error
}

// OffsetRange is the offsets First..Last of a partition.
type OffsetRange struct {
	Partition   int32
	First, Last int64
}

// Count is how many offsets the range holds.
func (r OffsetRange) Count() int64 { return r.Last - r.First + 1 }

// Tick moves the board's clock (uptimes, ages, staleness).
type Tick struct{ Now time.Time }

// Action is something the user or a script did, for the timeline.
type Action struct {
	At   time.Time
	Text string
}

// Mode is how the dashboard (re)starts consumer-usage from now on.
type Mode struct {
	At         time.Time
	UsageMode  string // "naive" or "guarded"
	UsageReset string // "latest" or "earliest"
}

// Operations a Request names.
const (
	OpCrash   = "crash"
	OpStop    = "stop"
	OpStart   = "start"
	OpRestart = "restart"
	// OpPause and OpResume ask the producer to stop or restart publishing;
	// the producer's own Paused/Resumed status confirms them.
	OpPause  = "pause"
	OpResume = "resume"
	// OpInjectBad asks the producer to publish malformed records; its
	// BadInjected status confirms it.
	OpInjectBad = "inject-bad"
	// OpHistory asks the producer for a burst of history; the lab notes
	// what it published.
	OpHistory = "history"
)

// Request: the user or a script asked the supervisor to act on a process.
// The board shows it at once (for example "crashing…") until the
// supervisor's ProcExited/ProcStarted confirms it, or a RequestDone with an
// error reverts it.
type Request struct {
	At   time.Time
	Name string
	Op   string // OpCrash, OpStop, OpStart, OpRestart, OpPause, OpResume
}

// RequestDone: the supervisor answered a Request. A nil Err changes nothing
// (the exit or start event does); an error reverts the pending state.
type RequestDone struct {
	At   time.Time
	Name string
	Op   string
	Err  error
}

// LaunchFailed: the lab could not start the lesson's processes, typically
// because the broker or store it was pointed at (--brokers, --mongo) did
// not answer. Every process that is not running shows Failed with Cause
// (short, at most 10 cells: "Kafka down") until a start or restart (r)
// retries; Err is the whole reason, for the timeline.
type LaunchFailed struct {
	At    time.Time
	Cause string
	Err   error
}

// PartitionMeta is one partition's placement as the cluster's metadata
// says, and the sensors the producer's partitioner puts there.
type PartitionMeta struct {
	Partition int32
	// Leader is the leader's node id; -1: the partition has no leader.
	Leader   int32
	Replicas []int32
	ISR      []int32
	// Preferred: the assignment's first replica, the leader the controller
	// hands the partition back to (-1 or 0 with one node: unknown/none).
	Preferred int32
	// Sensors: the sensor ids whose key lands in this partition
	// (kafkacfg.PartitionFor, the producer's own partitioner), in order.
	Sensors []string
}

// Partitions: one read of the topic's metadata (the lab's poll, about
// every 500 ms: leader changes are timed to that resolution). At is when
// it was asked for.
type Partitions struct {
	At    time.Time
	Topic string
	Rows  []PartitionMeta
	// MinISR is the topic's min.insync.replicas; 0 when unknown.
	MinISR int
	Err    error
}
