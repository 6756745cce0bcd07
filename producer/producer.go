// Package producer is the telemetry simulator: it publishes one message per
// sensor every interval to the sensor-data topic, keyed by sensor id, with
// an idempotent acks=all producer. On start it reads the topic so every
// sensor continues from its last odometers; it never resets them.
package producer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
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

// Main runs the producer role: flags, signals, exit code.
func Main(args []string) int {
	// Installed first: SIGUSR1's default action would kill the process.
	controlSig := make(chan os.Signal, 4)
	signal.Notify(controlSig, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(controlSig)

	cfg, preload, err := parseFlags(args)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	if preload > 0 {
		em, log := status.New(Role), cli.Logger(Role)
		perSensor := (preload + cfg.Sensors - 1) / cfg.Sensors
		return cli.ExitReporting(em, os.Stderr, Preload(ctx, cfg, perSensor, em, log))
	}

	control := make(chan Control, 4)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-controlSig:
				c := Resume
				if s == syscall.SIGUSR1 {
					c = Pause
				}
				select {
				case control <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	cfg.Control = control

	em := status.New(Role)
	log := cli.Logger(Role)
	cli.ExitWithin(ctx, cli.StopBound, em, log)
	return cli.ExitReporting(em, os.Stderr, Run(ctx, cfg, em, log))
}

func parseFlags(args []string) (cfg Config, preload int, err error) {
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	var conn cli.Conn
	conn.Register(fs)
	fs.IntVar(&cfg.Sensors, "sensors", 10, "number of simulated sensors")
	fs.DurationVar(&cfg.Interval, "interval", time.Second, "time between two messages of one sensor")
	fs.Int64Var(&cfg.Seed, "seed", 0, "seed of the simulated values (0 = from the clock)")
	fs.IntVar(&cfg.Count, "count", 0, "stop after N messages per sensor (0 = run until stopped)")
	fs.BoolVar(&cfg.LogAcks, "log-acks", os.Getenv("KRL_LOG_ACKS") == "1", "log every acknowledged message on stderr (env KRL_LOG_ACKS=1)")
	fs.IntVar(&cfg.InjectBad, "inject-bad", 0, fmt.Sprintf("publish N malformed records of every kind in turn (%d = one of each) and exit", BadCycle))
	fs.StringVar(&cfg.HTTP, "http", "127.0.0.1:0", "listen address of POST /inject-bad?n=N and POST /history?n=N (empty: no HTTP server)")
	acks := fs.String("acks", string(lesson.AcksAll), "acks setting: all (idempotent) or 1 (the leader alone; idempotence off); POST /acks?to=all|1 switches it")
	fs.StringVar(&cfg.AckedLog, "acked-log", "", "append every acknowledged record to this file, one JSON line each (partition, offset, key, timestamp, acks)")
	fs.IntVar(&preload, "preload", 0, "publish `N` messages of back-dated history as fast as the broker takes them, and exit (benchmarks: scripts/bench.sh)")
	if err := cli.Parse(fs, args); err != nil {
		return Config{}, 0, err
	}
	cfg.Brokers, cfg.Topic = conn.Brokers, conn.Topic
	if cfg.Acks, err = lesson.ParseAcks(*acks); err != nil {
		return Config{}, 0, cli.Usagef("--acks: %v", err)
	}
	switch {
	case cfg.Sensors < 1 || cfg.Sensors > 9999:
		return Config{}, 0, cli.Usagef("--sensors must be between 1 and 9999, got %d", cfg.Sensors)
	case cfg.Interval < time.Millisecond:
		return Config{}, 0, cli.Usagef("--interval must be at least 1ms, got %s", cfg.Interval)
	case cfg.Count < 0:
		return Config{}, 0, cli.Usagef("--count must not be negative, got %d", cfg.Count)
	case cfg.InjectBad < 0 || cfg.InjectBad > MaxInject:
		return Config{}, 0, cli.Usagef("--inject-bad must be between 0 and %d, got %d", MaxInject, cfg.InjectBad)
	case cfg.HTTP != "" && !validHostPort(cfg.HTTP):
		return Config{}, 0, cli.Usagef("--http %q: want host:port (127.0.0.1:0 picks a port), or empty for no HTTP server", cfg.HTTP)
	case preload < 0 || preload > 100_000_000:
		return Config{}, 0, cli.Usagef("--preload must be between 0 and 100000000, got %d", preload)
	case preload > 0 && (cfg.InjectBad > 0 || cfg.Count > 0):
		return Config{}, 0, cli.Usagef("--preload cannot be combined with --inject-bad or --count")
	case cfg.Brokers == "":
		return Config{}, 0, cli.Usagef("--brokers is empty")
	case cfg.Topic == "":
		return Config{}, 0, cli.Usagef("--topic is empty")
	}
	return cfg, preload, nil
}

func validHostPort(addr string) bool {
	_, _, err := net.SplitHostPort(addr)
	return err == nil
}

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

// publishLoop is Run's state once publishing starts: one method per thing
// that can happen.
type publishLoop struct {
	cfg   Config
	em    *status.Emitter
	log   *slog.Logger
	pub   *publisher
	fleet *Fleet

	known  []bool // see knownSensors
	sent   []int  // messages sent per sensor
	paused bool
	stall  *stallWatch
}

func (l *publishLoop) run(ctx context.Context) error {
	tick := time.NewTicker(l.cfg.Interval)
	defer tick.Stop()
	report := time.NewTicker(progressEvery)
	defer report.Stop()
	flushAcked := time.NewTicker(AckedFlushEvery)
	defer flushAcked.Stop()
	for {
		select {
		case <-ctx.Done():
			l.stop()
			return nil
		case c := <-l.cfg.Control:
			l.control(ctx, c)
		case <-tick.C:
			if done, err := l.tick(ctx); done {
				return err
			}
		case req := <-l.cfg.Inject:
			l.inject(ctx, req)
		case req := <-l.cfg.History:
			l.history(ctx, req)
		case req := <-l.cfg.AcksSwitch:
			if err := l.switchAcks(ctx, req); err != nil {
				return err
			}
		case <-flushAcked.C:
			l.pub.flushAcked()
		case <-report.C:
			l.pub.checkBack()
			l.stall.check(time.Now(), l.paused)
			l.progress()
		case err := <-l.pub.fatal:
			if err := l.pub.recoverFrom(err); err != nil {
				return err
			}
		}
	}
}

// progress reports the acknowledged count and, while records wait for
// their acknowledgement, how many and for how long none came: the
// scenarios see writes held (acks=all waiting for a frozen follower)
// within a second, before the Blocked report.
func (l *publishLoop) progress() {
	ev := status.Event{Type: status.Progress, Produced: l.pub.sent(), Sensors: l.cfg.Sensors}
	if n := l.pub.enqueued.Load() - l.pub.reported.Load(); n > 0 {
		ev.Count = n
		ev.Millis = time.Since(time.Unix(0, l.pub.lastAck.Load())).Milliseconds()
	}
	l.em.Emit(ev)
}

// stop flushes what it can after ctx ended.
func (l *publishLoop) stop() {
	l.em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
	timeout := stopFlushTimeout
	if l.pub.down.Load() {
		timeout = downFlushTimeout // nothing will be delivered: do not hold the exit
	}
	left := l.pub.flush(context.Background(), timeout)
	l.progress()
	l.log.Info("producer stopped", "delivered", l.pub.delivered.Load(), "failed", l.pub.failed.Load(), "unflushed", left)
}

// control pauses or resumes; a pause of a paused producer (or a resume of
// a running one) does nothing.
func (l *publishLoop) control(ctx context.Context, c Control) {
	switch {
	case c == Pause && !l.paused:
		l.paused = true
		left := l.pub.flush(ctx, stopFlushTimeout)
		l.pub.flushAcked()
		l.log.Info("paused", "delivered", l.pub.delivered.Load(), "unflushed", left)
		l.progress()
		l.em.Emit(status.Event{Type: status.Paused, Produced: l.pub.sent()})
	case c == Resume && l.paused:
		l.paused = false
		l.log.Info("resumed")
		l.em.Emit(status.Event{Type: status.Resumed, Produced: l.pub.sent()})
	}
}

// tick sends one message per sensor that has not reached Count. done: every
// sensor has, and Run returns err.
func (l *publishLoop) tick(ctx context.Context) (done bool, err error) {
	if l.paused {
		return false, nil
	}
	now := time.Now()
	done = true
	for i := range l.sent {
		if l.cfg.Count > 0 && l.sent[i] >= l.cfg.Count {
			continue
		}
		l.pub.produce(l.fleet.Next(i, now))
		l.known[i] = true
		l.sent[i]++
		if l.cfg.Count == 0 || l.sent[i] < l.cfg.Count {
			done = false
		}
	}
	if !done {
		return false, nil
	}
	left := l.pub.flush(ctx, doneFlushTimeout)
	l.progress()
	l.log.Info("count reached", "delivered", l.pub.delivered.Load(), "failed", l.pub.failed.Load(), "unflushed", left)
	if n := l.pub.failed.Load(); n > 0 || left > 0 {
		return true, fmt.Errorf("producer: %d deliveries failed, %d not flushed", n, left)
	}
	return true, nil
}

// inject publishes the bad records req asks for and replies once they are
// delivered, without holding the loop.
func (l *publishLoop) inject(ctx context.Context, req InjectRequest) {
	// Sensors with no message yet get one first, so a backwards
	// record has a valid one to go back from.
	for i := range l.known {
		if !l.known[i] {
			l.pub.produce(l.fleet.Next(i, time.Now()))
			l.known[i], l.sent[i] = true, l.sent[i]+1
		}
	}
	wait := l.pub.produceBad(BadRecords(req.N, l.cfg.Sensors, l.fleet.Last))
	go func() {
		res := wait(ctx)
		reportInjected(l.em, l.log, res, l.pub.sent())
		req.Reply <- res
	}()
}

// resume reads the topic until it succeeds; ok=false means ctx ended first.
func resume(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) (map[string]telemetry.Message, bool) {
	for {
		last, err := LoadLast(ctx, cfg.Brokers, cfg.Topic, log)
		if ctx.Err() != nil {
			return nil, false
		}
		if err == nil {
			return last, true
		}
		log.Warn("cannot read the topic to continue odometers; retrying", "brokers", cfg.Brokers, "err", err)
		em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: cfg.Brokers, Error: err.Error()})
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(retryEvery):
		}
	}
}

// publisher owns the librdkafka producer and its delivery reports.
type publisher struct {
	cfg Config
	em  *status.Emitter
	log *slog.Logger

	mu sync.Mutex
	p  *kafka.Producer
	wg sync.WaitGroup

	// enqueued counts messages librdkafka accepted; each one ends as
	// delivered or failed (a delivery report), unless its producer is
	// replaced after a fatal error.
	enqueued  atomic.Int64
	delivered atomic.Int64
	// injected counts malformed records delivered on purpose; they have
	// delivery channels of their own, so delivered leaves them out.
	injected atomic.Int64
	failed   atomic.Int64 // delivery reports with an error, and enqueue failures
	reported atomic.Int64 // delivery reports handled (delivered or failed)
	fatal    chan error
	// settledAt: unix nanos of the last Progress sent because every
	// enqueued record had its report (see settled).
	settledAt atomic.Int64

	down      atomic.Bool
	lastRetry atomic.Int64 // unix nanos of the last Retrying event
	// lastErr: the latest produce error librdkafka retried (nil: none),
	// read from its logs when errLogs.
	errLogs bool
	lastErr atomic.Pointer[produceErr]

	// acks: the setting of the producer in p (changed only by the
	// publishing loop, between two producers); acked: the log of what was
	// acknowledged (nil: none).
	acks  lesson.Acks
	acked *ackedLog
	// lastAck: unix nanos of the latest acknowledgement (of the start
	// before the first).
	lastAck atomic.Int64
}

// newPublisher starts a publisher; errLogs: read the produce errors
// librdkafka retries (kafkacfg.ProduceErrorLogs) for the Blocked event,
// which a bulk preload does without.
func newPublisher(cfg Config, em *status.Emitter, log *slog.Logger, errLogs bool) (*publisher, error) {
	pub := &publisher{cfg: cfg, em: em, log: log, fatal: make(chan error, 1), errLogs: errLogs, acks: cfg.Acks}
	if pub.acks == "" {
		pub.acks = lesson.AcksAll
	}
	pub.lastAck.Store(time.Now().UnixNano())
	if cfg.AckedLog != "" {
		a, err := openAckedLog(cfg.AckedLog)
		if err != nil {
			return nil, fmt.Errorf("producer: %w", err)
		}
		pub.acked = a
	}
	if err := pub.start(); err != nil {
		_ = pub.acked.close()
		return nil, err
	}
	return pub, nil
}

func (pub *publisher) start() error {
	cfg := kafkacfg.ProducerAcks(pub.cfg.Brokers, pub.acks)
	if pub.errLogs {
		cfg = kafkacfg.ProduceErrorLogs(cfg)
	}
	p, err := kafka.NewProducer(cfg)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	pub.mu.Lock()
	pub.p = p
	pub.mu.Unlock()
	pub.wg.Add(1)
	go pub.reports(p, pub.acks)
	if pub.errLogs {
		go pub.logs(p.Logs())
	}
	return nil
}

// produceErr is a produce error librdkafka retried, and when it was seen.
type produceErr struct {
	text string
	at   time.Time
}

// logs reads librdkafka's log lines until the producer is closed: the
// produce errors it retries silently are kept for the Blocked event (see
// kafkacfg.ProduceErrorLogs), its other debug lines dropped, the rest
// logged on stderr as before.
func (pub *publisher) logs(ch chan kafka.LogEvent) {
	for e := range ch {
		if text, ok := kafkacfg.ProduceError(e.Message); ok {
			pub.lastErr.Store(&produceErr{text: text, at: time.Now()})
			continue
		}
		if e.Level >= 7 {
			continue
		}
		level := slog.LevelInfo
		switch {
		case e.Level <= 3:
			level = slog.LevelError
		case e.Level == 4:
			level = slog.LevelWarn
		}
		pub.log.Log(context.Background(), level, "librdkafka: "+e.Message, "tag", e.Tag)
	}
}

// recoverFrom replaces the producer after a fatal error: an idempotent
// producer cannot continue (e.g. after a sequence gap), a new one gets a
// new producer id. The board shows the process retrying until the new
// producer's first delivery (or, paused, a metadata answer) reports it
// connected again: without marking it down here, nothing would, and a
// producer publishing fine would stay "retrying" on screen.
func (pub *publisher) recoverFrom(err error) error {
	pub.log.Error("fatal producer error; starting a new producer", "err", err)
	pub.down.Store(true)
	pub.em.Emit(status.Event{Type: status.Recovering, Endpoint: "kafka", Addr: pub.cfg.Brokers,
		Error: err.Error(), Reason: "starting a new producer"})
	return pub.restart()
}

func (pub *publisher) restart() error {
	pub.stopProducer()
	// Messages the old producer never reported on are gone.
	pub.enqueued.Store(pub.reported.Load())
	return pub.start()
}

func (pub *publisher) close() {
	pub.stopProducer()
	if err := pub.acked.close(); err != nil {
		pub.log.Warn("acknowledged-records log not written", "path", pub.cfg.AckedLog, "err", err)
	}
}

// stopProducer closes the librdkafka producer and waits for its last
// delivery reports.
func (pub *publisher) stopProducer() {
	pub.mu.Lock()
	p := pub.p
	pub.p = nil
	pub.mu.Unlock()
	if p != nil {
		p.Close() // closes Events(), ending reports
	}
	pub.wg.Wait()
}

func (pub *publisher) produce(m telemetry.Message) {
	value, err := telemetry.Encode(m)
	if err != nil { // a simulator bug, not bad luck
		pub.failed.Add(1)
		pub.log.Error("cannot encode generated message", "sensor", m.SensorID, "err", err)
		return
	}
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	topic := pub.cfg.Topic
	err = p.Produce(&kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            []byte(m.SensorID),
		Value:          value,
		Opaque:         m.Timestamp,
	}, nil)
	if err == nil {
		pub.enqueued.Add(1)
	}
	if err != nil {
		// Typically a full local queue while the broker is away: the
		// message is lost, but odometers are cumulative, so the next one
		// carries the usage on.
		n := pub.failed.Add(1)
		if n == 1 || n%100 == 0 {
			pub.log.Warn("cannot enqueue message", "sensor", m.SensorID, "failed_total", n, "err", err)
		}
	}
}

// flush waits up to timeout (or until ctx ends) until every enqueued
// message has its delivery report counted, and returns how many have not.
func (pub *publisher) flush(ctx context.Context, timeout time.Duration) int {
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		// Flush returns once librdkafka handed every report to the events
		// channel; the reports goroutine may still be counting the last ones.
		if p.Flush(100) == 0 && pub.reported.Load() >= pub.enqueued.Load() {
			return 0
		}
	}
	return int(pub.enqueued.Load() - pub.reported.Load())
}

// sent is every record the broker acknowledged from this producer, the
// telemetry and the malformed records injected on purpose alike: what the
// topic grew by, and what the dashboard shows as sent.
func (pub *publisher) sent() int64 { return pub.delivered.Load() + pub.injected.Load() }

// settled reports the delivered count as soon as a batch is acknowledged
// whole, at most every settledEvery: the 1 s progress tick fires in step
// with the send tick, before the batch it just sent is acknowledged, so by
// itself it would show "sent" one batch behind the topic.
func (pub *publisher) settled() {
	if pub.reported.Load() != pub.enqueued.Load() {
		return
	}
	now := time.Now().UnixNano()
	last := pub.settledAt.Load()
	if now-last < int64(settledEvery) || !pub.settledAt.CompareAndSwap(last, now) {
		return
	}
	pub.em.Emit(status.Event{Type: status.Progress, Produced: pub.sent(), Sensors: pub.cfg.Sensors})
}

func (pub *publisher) reports(p *kafka.Producer, acks lesson.Acks) {
	defer pub.wg.Done()
	for ev := range p.Events() {
		switch e := ev.(type) {
		case *kafka.Message:
			if err := e.TopicPartition.Error; err != nil {
				n := pub.failed.Add(1)
				pub.reported.Add(1) // after the counter: flush reads them in this order
				pub.log.Warn("delivery failed", "sensor", string(e.Key), "failed_total", n, "err", err)
				pub.unreachable(err)
				continue
			}
			// Everything a delivery does is done before it counts as
			// reported: flush returns on that count, and a report still
			// being handled after it would clear a later recoverFrom's down.
			pub.delivered.Add(1)
			pub.lastAck.Store(time.Now().UnixNano())
			if ts, ok := e.Opaque.(int64); ok {
				pub.acked.add(e.TopicPartition.Partition, int64(e.TopicPartition.Offset), e.Key, ts, acks)
			}
			if pub.cfg.LogAcks {
				pub.log.Info("acked", "sensor", string(e.Key), "ts", e.Opaque,
					"partition", e.TopicPartition.Partition, "offset", int64(e.TopicPartition.Offset))
			}
			if pub.down.CompareAndSwap(true, false) {
				pub.log.Info("broker reachable again", "brokers", pub.cfg.Brokers)
				pub.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: pub.cfg.Brokers})
			}
			pub.reported.Add(1)
			pub.settled()
		case kafka.Error:
			if e.IsFatal() {
				select {
				case pub.fatal <- e:
				default:
				}
				continue
			}
			pub.log.Warn("kafka client error", "err", e)
			pub.unreachable(e)
		}
	}
}

// checkBack reports the broker reachable again while no delivery would
// say so (paused, or nothing in flight): a metadata answer is enough.
func (pub *publisher) checkBack() {
	if !pub.down.Load() {
		return
	}
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	if _, err := p.GetMetadata(&pub.cfg.Topic, false, 500); err != nil {
		return
	}
	if pub.down.CompareAndSwap(true, false) {
		pub.log.Info("broker reachable again", "brokers", pub.cfg.Brokers)
		pub.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: pub.cfg.Brokers})
	}
}

// unreachable reports connectivity errors as Retrying: at the first one and
// then at most every few seconds while they last. librdkafka keeps retrying
// by itself.
func (pub *publisher) unreachable(err error) {
	var kerr kafka.Error
	if !errors.As(err, &kerr) {
		return
	}
	switch kerr.Code() {
	case kafka.ErrAllBrokersDown, kafka.ErrTransport, kafka.ErrResolve, kafka.ErrMsgTimedOut, kafka.ErrTimedOut:
	default:
		return
	}
	now := time.Now().UnixNano()
	if !pub.down.Swap(true) || now-pub.lastRetry.Load() > int64(5*time.Second) {
		pub.lastRetry.Store(now)
		pub.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: pub.cfg.Brokers, Error: kerr.Error()})
	}
}

// stallWatch tells when the producer is blocked: records buffered
// (enqueued, no delivery report yet) and no acknowledgement for more than
// BlockedAfter. librdkafka retries such records by itself until
// message.timeout.ms, reporting nothing: an acks=all write refused with
// NOT_ENOUGH_REPLICAS (ISR below min.insync.replicas) is retried silently,
// so without this the producer looked healthy while nothing landed. It is
// checked at every progress tick (1 s), so it shows 2-3 s after the last
// acknowledgement. Only the Run loop uses it.
type stallWatch struct {
	pub *publisher
	// delivered at the last check, and when it last moved (or when
	// nothing was buffered).
	delivered int64
	moved     time.Time
	// blocked: since when a Blocked event says so (zero: not blocked);
	// said: when it was last written.
	blocked, said time.Time
	// count: records buffered as the latest Blocked event said.
	count int64
}

func (w *stallWatch) check(now time.Time, paused bool) {
	delivered := w.pub.delivered.Load()
	buffered := w.pub.enqueued.Load() - w.pub.reported.Load()
	acked := delivered != w.delivered
	if w.moved.IsZero() || acked || buffered <= 0 {
		w.delivered, w.moved = delivered, now
		if !w.blocked.IsZero() {
			ev := status.Event{Type: status.Unblocked, Count: w.count, Millis: now.Sub(w.blocked).Milliseconds()}
			if !acked {
				// Nothing acknowledged, nothing buffered: they failed.
				ev.Error = "the buffered records failed (see the delivery errors)"
			}
			w.pub.log.Info("unblocked", "blocked_for", now.Sub(w.blocked), "acked", acked)
			w.pub.em.Emit(ev)
			w.blocked = time.Time{}
		}
		return
	}
	stalled := now.Sub(w.moved)
	if paused || stalled <= BlockedAfter {
		return
	}
	if w.blocked.IsZero() {
		w.blocked = w.moved
	} else if now.Sub(w.said) < blockedRepeat {
		return
	}
	w.said, w.count = now, buffered
	ev := status.Event{Type: status.Blocked, Count: buffered, Millis: stalled.Milliseconds()}
	// The broker's answer, if librdkafka logged one since the last ack.
	if e := w.pub.lastErr.Load(); e != nil && !e.at.Before(w.moved.Add(-progressEvery)) {
		ev.Error = e.text
	}
	w.pub.log.Warn("blocked: records buffered, none acknowledged", "buffered", buffered, "for", stalled, "error", ev.Error)
	w.pub.em.Emit(ev)
}
