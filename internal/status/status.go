// Package status is the child -> supervisor event protocol.
//
// Every role (broker, store, producer, consumer current|usage|query) writes
// one JSON object per line to stdout; human-readable logs go to stderr. The
// supervisor reads stdout line by line with Parse. This file is the one place
// where event types are defined and documented.
package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/redact"
)

// Type names an event. The set is closed: add new types here, with a comment.
type Type string

const (
	// Started: the process is up and has parsed its flags. Fields: PID, Mode, Reset, GroupID;
	// the producer's Acks.
	Started Type = "started"
	// Listening: a network endpoint is ready. Fields: Addr (host:port), Endpoint
	// ("kafka", "mongo" or "http").
	Listening Type = "listening"
	// Connected: the role reached its dependency. Fields: Endpoint ("kafka"|"mongo"), Addr.
	Connected Type = "connected"
	// Retrying: a dependency is unreachable; the role keeps trying. Fields: Endpoint, Addr, Error.
	Retrying Type = "retrying"
	// Assigned / Revoked: partitions of the topic owned by this consumer changed.
	// Fields: Partitions. consumer-usage's Assigned also has Redelivered
	// (messages processed before, by this or an earlier process, that it
	// will be delivered again: committed offset behind its checkpoints) and
	// First (the first assignment since the process started).
	// consumer-usage's also carry Member and Generation (its group member id
	// and the group generation the change belongs to); its Assigned carries
	// Positions (the offset each assigned partition starts at; the high
	// watermark -1) and Millis (how long since the revoke that began this
	// rebalance; 0 for a first assignment), its Revoked InFlight (messages
	// whose store writes were still in flight: their offsets are not
	// committed by this instance).
	Assigned Type = "assigned"
	Revoked  Type = "revoked"
	// EffectHeld: consumer-usage holds a usage write for its effect delay
	// (--effect-delay, POST /effect-delay) before it reaches the store: the
	// write is in flight. Fields: Partition and Offset (its first message),
	// Count (messages), Millis (the delay). Only written while a delay is set.
	EffectHeld Type = "effect_held"
	// LateWrite: a usage write completed after its partition was revoked
	// from this instance. Fields: Partition, Offset (first message), Count
	// (messages), Prevented (how many of them the store refused as second
	// effects).
	LateWrite Type = "late_write"
	// EffectRefused: guarded consumer-usage's store refused usage records
	// as second effects of messages already recorded (another owner's or an
	// earlier write). Fields: Partition, Offset (first message), Count.
	EffectRefused Type = "effect_refused"
	// EffectDelay: consumer-usage's effect delay changed. Fields: Millis.
	EffectDelay Type = "effect_delay"
	// CommitRejected: the group refused an offset commit because this
	// member no longer owns the partitions (illegal generation, unknown
	// member, rebalance in progress, fenced). Not progress, not a failure
	// of the process: the next owner replays from the last accepted commit.
	// Fields: Reason (when: revoke, shutdown, auto), Error.
	CommitRejected Type = "commit_rejected"
	// Progress: periodic position report. Fields: Positions (per partition
	// next offset to read and the high watermark as last known), Processed,
	// Invalid, Produced (producer), Sensors; the producer's also Count
	// (records enqueued and not acknowledged yet) and, with Count, Millis
	// (since its latest acknowledgement); consumer-usage's also
	// Prevented and Late (counters since start: second effects refused,
	// usage writes completed after their partition was revoked).
	Progress Type = "progress"
	// CaughtUp: the consumer reached the high watermarks it saw when it was
	// assigned. Fields: Processed (messages read to get there), Millis;
	// consumer-current's also History (the records of the topic below
	// those watermarks: what a replay reads).
	CaughtUp Type = "caught_up"
	// Rebuild: consumer-current says how this start rebuilds its state,
	// once, before it reads the topic. Fields: Strategy (the one it was
	// started with: replay, snapshot or changelog), Reason (why it reads
	// the whole topic instead: no snapshot, an unreadable or foreign one, an
	// empty changelog; empty when it did not fall back), SnapshotAt (when
	// the snapshot it loaded was written), Count (changelog records read),
	// Marks (of them, the marks: the offsets a publication covers), Sensors (sensor states restored), Positions (where each partition's
	// reading starts; the high watermark -1).
	Rebuild Type = "rebuild"
	// Prepares: what consumer-current keeps up for its next start. Fields:
	// Strategy (snapshot: it writes one at least every few seconds and at a
	// graceful stop; changelog: it publishes each sensor's state; replay:
	// nothing). Written at its start and when POST /rebuild changes it.
	Prepares Type = "prepares"
	// Prepared: consumer-current saved, for the first time since its
	// Prepares, what its next start needs. Fields: Strategy, SnapshotAt
	// (the snapshot written), Count (the changelog records published:
	// the values, then one mark), Sensors.
	Prepared Type = "prepared"
	// InvalidMessage: a message was counted and skipped. Fields: Partition, Offset, Error.
	InvalidMessage Type = "invalid_message"
	// CrashPoint: the consumer is about to SIGKILL itself at an armed crash
	// point. Fields: Point, Partition, Offset.
	CrashPoint Type = "crash_point"
	// CrashPointArmed: a crash point is armed from now on. It is written
	// before the point can fire, so a reader of this stream always sees it
	// ahead of the CrashPoint it leads to. Fields: Point ("none": disarmed),
	// After.
	CrashPointArmed Type = "crash_point_armed"
	// BadInjected: the producer published malformed records on purpose
	// (--inject-bad N, POST /inject-bad). Fields: Injected (how many were
	// delivered), Error (why some were not; empty when all were).
	BadInjected Type = "bad_injected"
	// Paused / Resumed: the producer stopped or restarted publishing.
	Paused  Type = "paused"
	Resumed Type = "resumed"
	// Error: something failed that the role does not retry. Fields: Error.
	Error Type = "error"
	// Backpressure: consumer-usage stopped taking new messages because the
	// store is down or slow: its partitions are paused and only the message
	// in hand (at most 1) is still being applied. Written when it begins and
	// again whenever the reason changes. Fields: Reason (e.g. "store
	// unreachable: ..." or "store slow: insert usage took 1.6s, limit 1s"),
	// Partitions (paused), Millis (how long it has lasted so far).
	Backpressure Type = "backpressure"
	// BackpressureEnded: the store answers within the limit again and the
	// partitions are resumed. Fields: Millis (how long it lasted).
	BackpressureEnded Type = "backpressure_ended"
	// Blocked: the producer has records enqueued that the broker has not
	// acknowledged for more than producer.BlockedAfter, while it is not
	// paused: librdkafka keeps retrying them (an acks=all write refused
	// with NOT_ENOUGH_REPLICAS, a partition without a leader, a broker
	// away), nothing is lost until message.timeout.ms. Written when it
	// begins and again every few seconds while it lasts. Fields: Count
	// (records buffered: enqueued and not yet reported), Millis (since the
	// last acknowledgement, or since the oldest unacknowledged record was
	// enqueued), Error (the latest produce error librdkafka logged, when
	// it logged one, e.g. "Broker: Not enough in-sync replicas").
	Blocked Type = "blocked"
	// Unblocked: acknowledgements arrive again after Blocked. Fields:
	// Count (records buffered when the first acknowledgement came), Millis
	// (how long it was blocked).
	Unblocked Type = "unblocked"
	// AcksSet: the producer switched its acks setting (POST /acks): it
	// flushed what was in flight and runs a new producer from now on.
	// Fields: Acks ("all" or "1"), Count (records acknowledged while it
	// flushed), Millis (how long the switch took). The producer's Started
	// carries Acks too.
	AcksSet Type = "acks_set"
	// AckedLogFailed: the producer cannot write its log of acknowledged
	// records (--acked-log; a full disk): it keeps publishing, counts the
	// acknowledged records it cannot list, retries at every flush and,
	// once a write succeeds, writes a marker line naming them
	// (producer.AckedGapLine). Said once per failure. Fields: Error.
	AckedLogFailed Type = "acked_log_failed"
	// Stopping: a graceful shutdown began (SIGTERM/SIGINT). Fields: Reason.
	Stopping Type = "stopping"
	// Recovering: a client error fatal to a client handle that the role
	// recovers from by itself (consumer-usage fenced after a broker outage
	// re-creates its consumer). Fields: Endpoint, Addr, Error, Reason (what
	// it does about it).
	Recovering Type = "recovering"
	// Skipped (consumer-usage): the client moved its position past
	// offsets it never delivered (an offset reset: OFFSET_OUT_OF_RANGE and
	// auto.offset.reset) and it goes on without them: Partition, Offset
	// (the first skipped) and Count.
	Skipped Type = "skipped"
)

// Position is one partition's read position as the consumer itself knows it.
type Position struct {
	Partition int32 `json:"partition"`
	// Offset is the next offset the consumer will process (last processed + 1).
	Offset int64 `json:"offset"`
	// HighWatermark is the log-end offset the consumer last learned from the broker.
	HighWatermark int64 `json:"high_watermark"`
}

// Event is one line of the protocol. Only the fields a type documents are set.
type Event struct {
	Time        time.Time  `json:"ts"`
	Role        string     `json:"role"`
	Type        Type       `json:"event"`
	PID         int        `json:"pid,omitempty"`
	Addr        string     `json:"addr,omitempty"`
	Endpoint    string     `json:"endpoint,omitempty"`
	Mode        string     `json:"mode,omitempty"`
	Reset       string     `json:"reset,omitempty"`
	GroupID     string     `json:"group_id,omitempty"`
	Partitions  []int32    `json:"partitions,omitempty"`
	Positions   []Position `json:"positions,omitempty"`
	Processed   int64      `json:"processed,omitempty"`
	Invalid     int64      `json:"invalid,omitempty"`
	Produced    int64      `json:"produced,omitempty"`
	Injected    int64      `json:"injected,omitempty"`
	Sensors     int        `json:"sensors,omitempty"`
	Millis      int64      `json:"millis,omitempty"`
	Partition   int32      `json:"partition,omitempty"`
	Offset      int64      `json:"offset,omitempty"`
	Point       string     `json:"point,omitempty"`
	After       int        `json:"after,omitempty"`
	Redelivered int64      `json:"redelivered,omitempty"`
	First       bool       `json:"first,omitempty"`
	Member      string     `json:"member,omitempty"`
	Generation  int32      `json:"generation,omitempty"`
	InFlight    int64      `json:"in_flight,omitempty"`
	Count       int64      `json:"count,omitempty"`
	Marks       int64      `json:"marks,omitempty"`
	Prevented   int64      `json:"prevented,omitempty"`
	Late        int64      `json:"late,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	Error       string     `json:"error,omitempty"`
	Strategy    string     `json:"strategy,omitempty"`
	SnapshotAt  time.Time  `json:"snapshot_at,omitzero"`
	History     int64      `json:"history,omitempty"`
	Acks        string     `json:"acks,omitempty"`
}

// Emitter writes events for one role. Safe for concurrent use.
type Emitter struct {
	mu   sync.Mutex
	role string
	w    io.Writer
}

// New returns an emitter writing to stdout.
func New(role string) *Emitter { return NewTo(role, os.Stdout) }

// NewTo returns an emitter writing to w (tests).
func NewTo(role string, w io.Writer) *Emitter { return &Emitter{role: role, w: w} }

// Emit writes e as one line, filling Time and Role.
func (em *Emitter) Emit(e Event) {
	if em == nil {
		return
	}
	e.Role = em.role
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	if bytes.Contains(b, []byte("://")) {
		// Reasons and errors can quote a connection URI.
		b = []byte(redact.String(string(b)))
	}
	em.mu.Lock()
	defer em.mu.Unlock()
	_, _ = em.w.Write(append(b, '\n'))
}

// Parse decodes one stdout line. Lines that are not events are an error so a
// supervisor can keep them as plain log text instead.
func Parse(line []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, fmt.Errorf("status: not an event: %w", err)
	}
	if e.Type == "" || e.Role == "" {
		return Event{}, fmt.Errorf("status: line has no role or event")
	}
	return e, nil
}
