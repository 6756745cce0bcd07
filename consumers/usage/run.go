package usage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// progressEvery is the period of Progress events.
const progressEvery = time.Second

// Run runs consumer-usage until ctx ends, then shuts down cleanly and
// returns nil. It returns an error only for what retrying cannot fix (a
// bad URI, a busy HTTP address, a fatal client error).
func Run(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) error {
	group := cfg.ResolveGroup()
	em.Emit(status.Event{Type: status.Started, PID: os.Getpid(), Mode: string(cfg.Mode), Reset: string(cfg.Reset), GroupID: group})
	log.Info("starting", "mode", cfg.Mode, "reset", cfg.Reset, "group", group, "topic", cfg.Conn.Topic)

	arm := &CrashArm{}
	if cfg.CrashPoint != "" {
		if err := arm.Arm(cfg.CrashPoint, cfg.CrashAfter); err != nil {
			return err
		}
		log.Warn("crash point armed", "point", cfg.CrashPoint, "after", cfg.CrashAfter)
		em.Emit(status.Event{Type: status.CrashPointArmed, Point: string(cfg.CrashPoint), After: cfg.CrashAfter})
	}

	st, err := store.Connect(ctx, cfg.Conn.Mongo)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = st.Close(closeCtx)
	}()
	storeAddr := uriHost(cfg.Conn.Mongo)
	tracker := health.NewTracker(cfg.StuckAfter)
	delay := &EffectDelay{}
	delay.Set(cfg.EffectDelay)
	if cfg.EffectDelay > 0 {
		em.Emit(status.Event{Type: status.EffectDelay, Millis: cfg.EffectDelay.Milliseconds()})
	}
	proc := NewProcessor(ProcessorConfig{
		Store: st, Topic: cfg.Conn.Topic, Mode: cfg.Mode, Crash: arm, EffectDelay: delay,
		Writer: store.Writer(cfg.InstanceID, time.Now()), Emitter: em, Log: log, StoreAddr: storeAddr, SlowAfter: cfg.StoreSlow,
	})

	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		return fmt.Errorf("http: %w", cli.ListenHint("--http", err))
	}
	srv := &http.Server{
		Handler:           newHandler(cfg.Mode, cfg.Reset, group, proc.Stats, tracker, arm, delay, em, log),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
	}()
	em.Emit(status.Event{Type: status.Listening, Endpoint: "http", Addr: ln.Addr().String()})
	log.Info("http listening", "addr", ln.Addr().String())

	if !waitStore(ctx, st, storeAddr, em, log) {
		return stopping(em, log, "signal")
	}
	// The seed's load_state: the checkpoints every delta is computed from.
	if err := proc.Load(ctx); err != nil {
		return stopping(em, log, "signal")
	}

	// Store trouble reaches the current consumer handle's loop (the
	// processor's slow-call timer runs on its own goroutine), and so does
	// the question whether a partition is still owned.
	var loop atomic.Pointer[kafkaLoop]
	proc.cfg.Owned = func(p int32) bool {
		k := loop.Load()
		return k == nil || k.owns(p)
	}
	proc.cfg.OnStoreTrouble = func(reason string) {
		if k := loop.Load(); k != nil {
			k.storeTrouble(reason)
		}
	}
	for incarnation := 1; ; incarnation++ {
		consumer, err := kafka.NewConsumer(kafkacfg.Usage(cfg.Conn.Brokers, group, cfg.Reset, cfg.MemberInstance()))
		if err != nil {
			return fmt.Errorf("kafka consumer: %w", err)
		}
		k := &kafkaLoop{
			ctx: ctx, cfg: cfg, em: em, log: log, consumer: consumer, proc: proc,
			positions: map[int32]int64{}, firstAssign: incarnation == 1, health: tracker, st: st,
		}
		loop.Store(k)
		err = k.run()
		var fenced errFenced
		if !errors.As(err, &fenced) {
			return err
		}
		// Fencing is fatal to a librdkafka handle but not to the group
		// membership: a new handle with the same group.instance.id takes
		// the member's place and resumes at the committed offsets. Exiting
		// instead would leave consumer-usage down after every broker
		// restart that outlasts its session, for no fault of its own. The
		// usual way here (docs/cluster.md): the group's coordinator does
		// not answer for a whole session (killed, frozen, or handing the
		// group to another broker), the client drops its member id and
		// rejoins under the same instance id, and the commit it then sends
		// for the old membership is refused.
		em.Emit(status.Event{Type: status.Recovering, Endpoint: "kafka", Addr: cfg.Conn.Brokers,
			Error:  "fenced by its group: its coordinator did not answer for a whole session, and its rejoin under the same group.instance.id fenced the old membership",
			Reason: "re-creating its Kafka consumer"})
		log.Warn("fenced; re-creating the Kafka consumer", "error", fenced.err)
		if cfg.Mode == lesson.Guarded {
			// What the fenced handle made durable is the only truth now.
			if err := proc.Load(ctx); err != nil {
				return stopping(em, log, "signal")
			}
		}
	}
}

// errFenced ends one consumer handle that the group fenced (a static
// member replaced by its own rejoin after a broker outage); Run re-creates it.
type errFenced struct{ err kafka.Error }

func (e errFenced) Error() string { return "fenced: " + e.err.Error() }

// closeTimeout bounds Close: after a fatal error librdkafka's Close can
// block for good, and a stuck Close would keep a dead consumer looking
// alive.
const closeTimeout = 5 * time.Second

func stopping(em *status.Emitter, log *slog.Logger, reason string) error {
	em.Emit(status.Event{Type: status.Stopping, Reason: reason})
	log.Info("stopping", "reason", reason)
	return nil
}

// uriHost is the host part of a mongodb URI, without credentials.
func uriHost(uri string) string {
	if u, err := url.Parse(uri); err == nil {
		return u.Host
	}
	return ""
}

// waitStore pings the store until it answers; false means ctx ended first.
func waitStore(ctx context.Context, st *store.Store, addr string, em *status.Emitter, log *slog.Logger) bool {
	delay := 500 * time.Millisecond
	for {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := st.Ping(pingCtx)
		cancel()
		if err == nil {
			em.Emit(status.Event{Type: status.Connected, Endpoint: "mongo", Addr: addr})
			log.Info("store connected", "addr", addr)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		em.Emit(status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: addr, Error: err.Error()})
		log.Warn("store unreachable; retrying", "addr", addr, "error", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}
