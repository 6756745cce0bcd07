package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/embedded"
	"github.com/kafka-recovery-lab/krl/internal/lab"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/producer"
)

// preloadTopic gives the embedded broker's topic a backlog of about n
// messages (whole rounds of the sensors) before the lab starts anything: a
// broker of its own on the run's data directory, the producer's Preload,
// then that broker stops and the lab's broker opens the same data. No
// consumer runs meanwhile, so consumer-usage (reset latest) starts after
// the backlog, and consumer-current replays it at every start.
func preloadTopic(ctx context.Context, cfg lab.Config, n int) error {
	start := time.Now()
	bctx, stop := context.WithCancel(ctx)
	defer stop()
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- embedded.RunBroker(bctx, embedded.BrokerConfig{
			DataDir: filepath.Join(cfg.RunDir, "broker"), Listen: "127.0.0.1:0", Topic: cfg.Topic, Partitions: 3,
		}, status.NewTo(board.Broker, listenWriter(addrs)), cfg.Log.With("role", "preload-broker"))
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		if err == nil {
			err = errors.New("the broker stopped before it listened")
		}
		return err
	case <-time.After(60 * time.Second):
		return errors.New("the broker did not listen within 60s")
	}
	pcfg := producer.Config{Brokers: addr, Topic: cfg.Topic, Sensors: cfg.Sensors, Interval: cfg.Interval, Seed: cfg.Seed}
	err := producer.Preload(bctx, pcfg, (n+cfg.Sensors-1)/cfg.Sensors,
		status.NewTo(board.Producer, io.Discard), cfg.Log.With("role", "preload-producer"))
	stop() // the broker persists its data as it stops
	if berr := <-done; err == nil && berr != nil {
		err = fmt.Errorf("broker: %w", berr)
	}
	if err == nil {
		cfg.Log.Info("preload done", "messages", n, "took", time.Since(start).Round(time.Millisecond))
	}
	return err
}

// listenWriter passes on the address of a role's Listening event (the
// emitter writes one event per line, one line per Write).
type listenWriter chan<- string

func (w listenWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(string(p), "\n") {
		if ev, err := status.Parse([]byte(line)); err == nil && ev.Type == status.Listening {
			select {
			case w <- ev.Addr:
			default:
			}
		}
	}
	return len(p), nil
}
