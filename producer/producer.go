// Package producer is the telemetry simulator: it publishes one message per
// sensor every interval to the sensor-data topic, keyed by sensor id, with
// an idempotent acks=all producer. On start it reads the topic so every
// sensor continues from its last odometers; it never resets them.
package producer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Role is the name the producer reports in its status events.
const Role = "producer"

// Control is a run-time command to the producer.
type Control int

const (
	// Pause stops publishing (after flushing what is in flight).
	Pause Control = iota + 1
	// Resume starts publishing again.
	Resume
)

// Config configures Run.
type Config struct {
	Brokers string
	Topic   string
	// Sensors is the number of simulated machines, e.g. 10.
	Sensors int
	// Interval between two messages of one sensor.
	Interval time.Duration
	// Seed makes the generated values deterministic; 0 picks one from the clock.
	Seed int64
	// Count stops after this many messages per sensor; 0 runs until ctx ends.
	Count int
	// Control delivers Pause / Resume; nil means none.
	Control <-chan Control
	// LogAcks logs every acknowledged message (sensor, timestamp,
	// partition, offset) on stderr, so a test can check each one is in the
	// topic after any crash. Off by default: one line per message.
	LogAcks bool
	// InjectBad > 0 makes Run a one-shot: publish that many malformed
	// records (BadRecords) after reading the topic, wait for their
	// deliveries, and return.
	InjectBad int
	// HTTP is the listen address of POST /inject-bad ("" = no server).
	HTTP string
	// Inject delivers injection requests to the publishing loop (the HTTP
	// server's, or a test's); nil means none.
	Inject chan InjectRequest
	// History delivers history requests the same way (POST /history).
	History chan HistoryRequest
	// Acks is the acks setting to start with ("" = all); AcksSwitch
	// delivers switches (POST /acks) the same way as History.
	Acks       lesson.Acks
	AcksSwitch chan AcksRequest
	// AckedLog is the file every acknowledged record is appended to
	// (AckedRecord, one JSON line each); "" keeps none.
	AckedLog string
	// Park is a sensor that publishes nothing ("" none): a machine that
	// stopped, whose last message stays its latest until retention
	// deletes it.
	Park string
}

const (
	retryEvery       = time.Second
	progressEvery    = time.Second
	settledEvery     = 250 * time.Millisecond
	stopFlushTimeout = 4 * time.Second // under cli.StopBound
	downFlushTimeout = time.Second
	doneFlushTimeout = 30 * time.Second
	// BlockedAfter: records buffered and none acknowledged for longer than
	// this make the producer report itself Blocked (a healthy acks=all
	// write is acknowledged within milliseconds; linger.ms is 5).
	BlockedAfter = 2 * time.Second
	// blockedRepeat: while blocked, the Blocked event is repeated this
	// often with the growing buffered count (the row's "N buf" is never
	// more than a second old).
	blockedRepeat = time.Second
)

// Run publishes until ctx ends (then flushes and returns nil) or, with
// Count set, until every sensor sent Count messages. An unreachable broker
// is reported as status.Retrying and retried, never returned as an error.
func Run(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) error {
	if cfg.Sensors < 1 || cfg.Interval <= 0 || cfg.Count < 0 {
		return fmt.Errorf("producer: bad config: sensors=%d interval=%s count=%d", cfg.Sensors, cfg.Interval, cfg.Count)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	if cfg.Acks == "" {
		cfg.Acks = lesson.AcksAll
	}
	em.Emit(status.Event{Type: status.Started, PID: os.Getpid(), Acks: string(cfg.Acks)})
	log.Info("producer starting", "brokers", cfg.Brokers, "topic", cfg.Topic, "sensors", cfg.Sensors,
		"interval", cfg.Interval, "seed", cfg.Seed, "count", cfg.Count, "acks", cfg.Acks)

	last, ok := resume(ctx, cfg, em, log)
	if !ok {
		em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
		return nil
	}
	em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: cfg.Brokers})
	fleet := NewFleet(cfg.Seed, cfg.Sensors, last)

	pub, err := newPublisher(cfg, em, log, true)
	if err != nil {
		return err
	}
	defer pub.close()

	known := knownSensors(fleet, cfg.Sensors, last)
	if cfg.InjectBad > 0 {
		return injectOnce(ctx, cfg, em, log, pub, fleet, known)
	}
	if cfg.HTTP != "" {
		if cfg.Inject == nil {
			cfg.Inject = make(chan InjectRequest)
		}
		if cfg.History == nil {
			cfg.History = make(chan HistoryRequest)
		}
		if cfg.AcksSwitch == nil {
			cfg.AcksSwitch = make(chan AcksRequest)
		}
		stopHTTP, err := serveHTTP(ctx, cfg.HTTP, cfg.Inject, cfg.History, cfg.AcksSwitch, em, log)
		if err != nil {
			return err
		}
		defer stopHTTP()
	}
	l := &publishLoop{cfg: cfg, em: em, log: log, pub: pub, fleet: fleet, known: known,
		sent: make([]int, cfg.Sensors), stall: &stallWatch{pub: pub}}
	return l.run(ctx)
}

// knownSensors[i]: sensor i has a message in the topic (or on its way).
func knownSensors(fleet *Fleet, sensors int, last map[string]telemetry.Message) []bool {
	known := make([]bool, sensors)
	for i := range known {
		_, known[i] = last[fleet.Last(i).SensorID]
	}
	return known
}
