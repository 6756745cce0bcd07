package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// Launch starts the infrastructure, then the consumers and the producer,
// then the pollers. It returns once every process was started (or failed).
func (l *Lab) Launch(ctx context.Context) error {
	l.started = time.Now()
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.runCtx = runCtx

	l.startPump()
	l.poll(runCtx, 250*time.Millisecond, func(ctx context.Context) { l.emit(board.Tick{Now: time.Now()}) })
	infraFailed := func(cause string, err error) error {
		l.emit(board.LaunchFailed{At: time.Now(), Cause: cause, Err: err})
		return err
	}

	if l.cfg.Cluster > 0 {
		if err := l.startCluster(ctx); err != nil {
			return infraFailed("no cluster", err)
		}
	}
	if l.embeddedBroker {
		// The board learns the address from the broker's Listening event.
		args := append(slices.Clone(role.Lookup(board.Broker).Command),
			"--data-dir", filepath.Join(l.cfg.RunDir, "broker"), "--topic", l.cfg.Topic)
		if l.cfg.OffsetsRetention > 0 {
			args = append(args, "--offsets-retention", l.cfg.OffsetsRetention.String())
		}
		if _, err := l.startInfra(ctx, board.Broker, args); err != nil {
			return infraFailed("no broker", err)
		}
	}
	if l.embeddedStore {
		// The board makes the URI from the store's Listening event, with no
		// database in it: every role then uses store.DefaultDatabase, and
		// the address shown is the URI the roles were given.
		args := append(slices.Clone(role.Lookup(board.Store).Command), "--data-dir", filepath.Join(l.cfg.RunDir, "store"))
		var first []string
		if l.cfg.StoreLatency > 0 {
			// Slow from the start; a restart (x then r) brings it back at
			// full speed: the slow store's recovery.
			first = []string{"--latency", l.cfg.StoreLatency.String()}
		}
		if _, err := l.startInfra(ctx, board.Store, args, first...); err != nil {
			return infraFailed("no store", err)
		}
	}
	return l.launchRoles(ctx)
}

// DefaultConnectTimeout is how long the lab waits for the broker and the
// store to answer before it says they are down: long enough for a broker
// that is still starting on a busy laptop.
const DefaultConnectTimeout = 15 * time.Second

func (l *Lab) connectTimeout() time.Duration {
	if l.cfg.ConnectTimeout > 0 {
		return l.cfg.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// launchError is why the lesson's processes could not be started, with
// the short cause the board shows in their rows.
type launchError struct {
	cause string
	err   error
}

func (e *launchError) Error() string { return e.err.Error() }
func (e *launchError) Unwrap() error { return e.err }

// launchRoles checks that the broker and the store answer, then starts
// the consumers, the producer and the pollers, once. On failure every
// process not running shows failed with the cause, and a later call (r on
// any of them) tries again.
func (l *Lab) launchRoles(ctx context.Context) error {
	l.launchMu.Lock()
	defer l.launchMu.Unlock()
	if l.launched {
		return nil
	}
	err := l.launchRolesLocked(ctx)
	if err != nil {
		cause := "not started"
		var le *launchError
		if errors.As(err, &le) {
			cause = le.cause
		}
		l.failed = true
		l.emit(board.LaunchFailed{At: time.Now(), Cause: cause, Err: err})
		return err
	}
	l.launched, l.failed = true, false
	return nil
}

// launchFailed reports whether launchRoles failed and has not succeeded since.
func (l *Lab) launchFailed() bool {
	l.launchMu.Lock()
	defer l.launchMu.Unlock()
	return l.failed
}

func (l *Lab) launchRolesLocked(ctx context.Context) error {
	brokers, mongo := l.Addresses()
	if brokers == "" || mongo == "" {
		return &launchError{"no infra", errors.New("the broker or the store has no address yet (did it start? see its log)")}
	}
	var err error
	if l.offsets == nil {
		if l.offsets, err = observe.NewOffsets(brokers, l.log); err != nil {
			return fmt.Errorf("lag reader: %w", err)
		}
	}
	if err := l.ensureTopics(ctx, brokers); err != nil {
		return err
	}
	if d := cmp.Or(l.retentionSetting(), l.cfg.Retention); d > 0 {
		if err := l.applyRetention(ctx, d); err != nil {
			return &launchError{"Kafka error", fmt.Errorf("retention of %s: %w", l.cfg.Topic, err)}
		}
		l.mu.Lock()
		l.retention = d
		l.mu.Unlock()
	}
	if err := l.checkStore(ctx, mongo); err != nil {
		return err
	}
	if err := l.connectYours(ctx, mongo); err != nil {
		return err
	}
	if err := l.startRoles(); err != nil {
		return err
	}
	if l.auditor, err = audit.NewReader(brokers, l.cfg.Topic, l.log); err != nil {
		return fmt.Errorf("audit reader: %w", err)
	}
	l.startPollers()
	return nil
}

// ensureTopics creates the topic and its dead-letter topic if missing: an
// external broker may not have them yet, and consumers subscribed to a
// missing topic would only wait for it.
func (l *Lab) ensureTopics(ctx context.Context, brokers string) error {
	tctx, tcancel := context.WithTimeout(ctx, l.connectTimeout())
	rf, topicConfig := l.replication()
	created, err := l.offsets.EnsureTopicReplicated(tctx, l.cfg.Topic, 3, rf, topicConfig)
	tcancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return &launchError{"Kafka down", fmt.Errorf("no answer from Kafka at %s within %s (is it running? check --brokers / KAFKA_BROKER)", brokers, l.connectTimeout())}
	}
	if err != nil {
		return &launchError{"Kafka error", fmt.Errorf("topic %s on %s: %w", l.cfg.Topic, brokers, err)}
	}
	if created {
		text := fmt.Sprintf("created topic %s with 3 partitions", l.cfg.Topic)
		if rf > 1 {
			text += fmt.Sprintf(", replication factor %d, min.insync.replicas=%s", rf, topicConfig["min.insync.replicas"])
		}
		l.emit(board.Action{At: time.Now(), Text: text})
	}
	dlq := kafkacfg.DeadLetterTopic(l.cfg.Topic)
	tctx, tcancel = context.WithTimeout(ctx, l.connectTimeout())
	created, err = l.offsets.EnsureTopicReplicated(tctx, dlq, kafkacfg.DeadLetterPartitions, rf, topicConfig)
	tcancel()
	if err != nil {
		return &launchError{"Kafka error", fmt.Errorf("dead-letter topic %s on %s: %w", dlq, brokers, err)}
	}
	if created {
		l.emit(board.Action{At: time.Now(), Text: fmt.Sprintf("created dead-letter topic %s", dlq)})
	}
	changelog := kafkacfg.ChangelogTopic(l.cfg.Topic)
	changelogConfig := kafkacfg.ChangelogTopicConfig()
	maps.Copy(changelogConfig, topicConfig)
	tctx, tcancel = context.WithTimeout(ctx, l.connectTimeout())
	created, err = l.offsets.EnsureTopicReplicated(tctx, changelog, kafkacfg.ChangelogPartitions, rf, changelogConfig)
	tcancel()
	if err != nil {
		return &launchError{"Kafka error", fmt.Errorf("changelog topic %s on %s: %w", changelog, brokers, err)}
	}
	if created {
		l.emit(board.Action{At: time.Now(), Text: fmt.Sprintf("created consumer-current's changelog topic %s (compacted)", changelog)})
	}
	return nil
}

// checkStore connects the lab's store client and pings the store.
func (l *Lab) checkStore(ctx context.Context, mongo string) error {
	var err error
	if l.db == nil {
		if l.db, err = store.Connect(ctx, mongo); err != nil {
			return &launchError{"bad --mongo", fmt.Errorf("store: %w (check --mongo / MONGO_URI)", err)}
		}
	}
	pctx, pcancel := context.WithTimeout(ctx, l.connectTimeout())
	err = l.db.Ping(pctx)
	pcancel()
	if err != nil {
		return &launchError{"store down", fmt.Errorf("MongoDB at %s did not answer (is it running? check --mongo / MONGO_URI): %w", redact.String(mongo), err)}
	}
	return nil
}

// startRoles defines the lesson's roles once and starts those not running,
// in start order.
func (l *Lab) startRoles() error {
	if !l.defined {
		for _, name := range roles {
			if err := l.sup.Define(l.roleSpec(name)); err != nil {
				return err
			}
		}
		l.defined = true
	}
	for _, name := range roles {
		if l.sup.Running(name) {
			continue
		}
		if err := l.sup.Start(name); err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
	}
	return nil
}

// startPollers starts the audit and the pollers that feed the board.
func (l *Lab) startPollers() {
	runCtx := l.runCtx
	l.runAudit(l.auditor)
	l.poll(runCtx, 500*time.Millisecond, l.pollOffsets)
	// Leaders and ISRs: a failover is timed to this period.
	l.poll(runCtx, 500*time.Millisecond, l.pollPartitions)
	// The audit's latest messages are taken just before consumer-current's
	// state, so the state is compared with the audit as of the same moment
	// (at most a message that arrived in between makes it "ahead").
	l.poll(runCtx, 500*time.Millisecond, func(ctx context.Context) { l.pollTruth(ctx); l.pollState(ctx) })
	// A usage cut carries its own expectation.
	l.poll(runCtx, time.Second, l.pollUsage)
	l.poll(runCtx, time.Second, l.pollHealth)
	// What the producer was told it wrote, against what the audit reads.
	acked := &ackedPoll{tail: ackedTail{path: AckedLogPath(l.cfg.RunDir)}, check: audit.NewAckCheck()}
	l.poll(runCtx, ackedEvery, func(ctx context.Context) { l.pollAcked(ctx, acked) })
}

// startInfra starts an embedded broker or store on a free port, waits for
// its address, and pins the address for later restarts.
// firstOnly are flags of the first start only.
func (l *Lab) startInfra(ctx context.Context, name string, args []string, firstOnly ...string) (string, error) {
	ch := l.awaitListen(name)
	defer l.forgetListen(name)
	first := append(append(append([]string{}, args...), firstOnly...), "--listen", "127.0.0.1:0")
	if err := l.sup.Define(supervisor.Spec{Name: name, Args: first, Tier: 0, Env: roleEnv(name)}); err != nil {
		return "", err
	}
	if err := l.sup.Start(name); err != nil {
		return "", fmt.Errorf("start %s: %w", name, err)
	}
	select {
	case r := <-ch:
		if r.exit != nil {
			return "", l.exitedBeforeListening(name, *r.exit)
		}
		// Restarts reuse the port so clients reconnect to the same address.
		if err := l.sup.SetArgs(name, append(args, "--listen", r.addr)); err != nil {
			return "", err
		}
		return r.addr, nil
	case <-time.After(60 * time.Second):
		return "", fmt.Errorf("%s did not start listening within 60s; see %s", name,
			filepath.Join(l.cfg.RunDir, "logs", name+".log"))
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
