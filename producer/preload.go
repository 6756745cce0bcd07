package producer

import (
	"context"
	"fmt"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"log/slog"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// preloadBatch bounds the messages in librdkafka's local queue at once (its
// default limit is 100,000; a full queue refuses messages).
const preloadBatch = 20_000

// Preload publishes perSensor messages for each of cfg.Sensors sensors as
// fast as the broker takes them, stamped as the history of the last
// perSensor intervals (the last one now), and returns once all of them are
// delivered. Like Run, each sensor continues from what the topic already
// holds. It gives a fresh topic a backlog, so that a replay from earliest
// takes long enough to be watched.
func Preload(ctx context.Context, cfg Config, perSensor int, em *status.Emitter, log *slog.Logger) error {
	if cfg.Sensors < 1 || cfg.Interval <= 0 || perSensor < 0 {
		return fmt.Errorf("producer: bad preload: sensors=%d interval=%s per sensor=%d", cfg.Sensors, cfg.Interval, perSensor)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	// A topic that does not exist would make resume wait for it forever
	// (Run waits for the dashboard to create it; a preload has nobody).
	if err := ensureTopic(ctx, cfg, log); err != nil {
		return err
	}
	last, ok := resume(ctx, cfg, em, log)
	if !ok {
		return ctx.Err()
	}
	fleet := NewFleet(cfg.Seed, cfg.Sensors, last)
	pub, err := newPublisher(cfg, em, log, false)
	if err != nil {
		return err
	}
	defer pub.close()

	return pub.publishHistory(ctx, fleet, cfg.Sensors, perSensor, cfg.Interval)
}

// ensureTopic creates cfg.Topic with the lab's 3 partitions unless it
// exists.
func ensureTopic(ctx context.Context, cfg Config, log *slog.Logger) error {
	o, err := observe.NewOffsets(cfg.Brokers, log)
	if err != nil {
		return fmt.Errorf("producer: preload: %w", err)
	}
	defer o.Close()
	created, err := o.EnsureTopic(ctx, cfg.Topic, 3)
	if err != nil {
		return fmt.Errorf("producer: preload: %w", err)
	}
	if created {
		log.Info("topic created", "topic", cfg.Topic, "partitions", 3)
	}
	return nil
}
