// Package usage is consumer-usage, strategy 2 of the seed article ("checkpoint
// and skip"): it computes the usage delta between consecutive messages of a
// sensor, saves it to the store as an additive record and keeps a per-sensor
// checkpoint in the store.
//
// Naive mode (the default) is the article's code, weaknesses included, because
// they are the lesson. Guarded mode applies each message's effect at most once
// and in order, whatever crashes or replays happen (see Processor.HandleBatch).
// Either way every invalid record is forwarded to <topic>.dlq exactly once
// (dlq.go). Processor knows nothing of Kafka; Run wires it to a consumer, the
// status events and the HTTP server. docs/consumer-usage.md explains the design.
package usage

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Role is the name in status events and logs.
const Role = "consumer-usage"

// Config is consumer-usage's command line.
type Config struct {
	Conn  cli.Conn
	HTTP  string
	Mode  lesson.Mode
	Reset lesson.Reset
	// Group is the consumer group; GroupExplicit says --group was given
	// (otherwise --reset earliest picks a fresh group, see ResolveGroup).
	Group         string
	GroupExplicit bool
	// CrashPoint ("" = none) is armed at start to fire at the CrashAfter-th
	// message that reaches it.
	CrashPoint lesson.CrashPoint
	CrashAfter int
	// StuckAfter: GET /healthz answers 503 once the lag has been > 0 this
	// long without progress.
	StuckAfter time.Duration
	// StoreSlow: a store call not answered within it puts consumer-usage
	// in backpressure (see kafkaLoop.storeTrouble).
	StoreSlow time.Duration
	// InstanceID is the static member id (group.instance.id); Dynamic
	// joins without one.
	InstanceID string
	Dynamic    bool
	// EffectDelay holds every usage write for this long before it reaches
	// the store, so it can still be in flight when its partition is revoked
	// (the rebalance lesson). Changed at run time by POST /effect-delay.
	EffectDelay time.Duration
}

// MaxEffectDelay bounds --effect-delay: a write held longer would outlast
// the supervisor's stop bound.
const MaxEffectDelay = time.Minute

// ParseFlags parses consumer-usage's command line. Every mistake is a
// cli.ErrUsage.
func ParseFlags(args []string) (Config, error) {
	var cfg Config
	var mode, reset, point string
	fs := flag.NewFlagSet("consumer usage", flag.ContinueOnError)
	cfg.Conn.Register(fs)
	fs.StringVar(&cfg.HTTP, "http", "127.0.0.1:0", "HTTP listen address (GET /healthz, POST /crash-at, POST /effect-delay)")
	fs.StringVar(&mode, "mode", string(lesson.Naive), "naive (the article's code) or guarded (effects at most once, in order)")
	fs.StringVar(&reset, "reset", string(lesson.Latest), "auto.offset.reset: latest, or earliest (with a fresh group unless --group is given)")
	fs.StringVar(&cfg.Group, "group", kafkacfg.UsageGroupID, "consumer group id")
	fs.StringVar(&point, "crash-at", "", "arm a crash point at start: "+string(lesson.AfterDelta)+" or "+string(lesson.AfterCheckpoint))
	fs.IntVar(&cfg.CrashAfter, "crash-after", 1, "crash at the Nth message that reaches the crash point")
	fs.DurationVar(&cfg.StuckAfter, "stuck-after", health.DefaultStuckAfter, "GET /healthz answers 503 after this long with lag > 0 and no progress")
	fs.DurationVar(&cfg.StoreSlow, "store-slow", DefaultSlowAfter, "a store call not answered within this is slow: stop taking messages (backpressure) until the store answers within it again")
	fs.StringVar(&cfg.InstanceID, "instance-id", Role, "static group member id (group.instance.id); each instance of a scaled consumer-usage needs its own")
	var membership string
	fs.StringVar(&membership, "membership", "static", "static (the member keeps its partitions across a quick restart) or dynamic (every leave or join rebalances)")
	fs.DurationVar(&cfg.EffectDelay, "effect-delay", 0, "hold every usage write this long before it reaches the store (0: none; at most 1m)")
	if err := cli.Parse(fs, args); err != nil {
		return Config{}, err
	}
	switch membership {
	case "static":
		if cfg.InstanceID == "" {
			return Config{}, cli.Usagef("--instance-id is empty (static membership needs one)")
		}
	case "dynamic":
		cfg.Dynamic = true
	default:
		return Config{}, cli.Usagef("--membership %q: want static or dynamic", membership)
	}
	if cfg.EffectDelay < 0 || cfg.EffectDelay > MaxEffectDelay {
		return Config{}, cli.Usagef("--effect-delay must be between 0 and %s, got %s", MaxEffectDelay, cfg.EffectDelay)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "group" {
			cfg.GroupExplicit = true
		}
	})
	var err error
	if cfg.Mode, err = lesson.ParseMode(mode); err != nil {
		return Config{}, cli.Usagef("--mode: %v", err)
	}
	if cfg.Reset, err = lesson.ParseReset(reset); err != nil {
		return Config{}, cli.Usagef("--reset: %v", err)
	}
	if cfg.Group == "" {
		return Config{}, cli.Usagef("--group is empty")
	}
	if point != "" {
		if cfg.CrashPoint, err = lesson.ParseArmablePoint(point); err != nil {
			return Config{}, cli.Usagef("--crash-at: %v", err)
		}
	}
	if cfg.StuckAfter <= 0 {
		return Config{}, cli.Usagef("--stuck-after %v: want more than 0", cfg.StuckAfter)
	}
	if cfg.StoreSlow < 10*time.Millisecond || cfg.StoreSlow > time.Minute {
		return Config{}, cli.Usagef("--store-slow must be between 10ms and 1m, got %s", cfg.StoreSlow)
	}
	if cfg.CrashAfter < 1 {
		return Config{}, cli.Usagef("--crash-after %d: want 1 or more", cfg.CrashAfter)
	}
	return cfg, nil
}

// MemberInstance is the group.instance.id the consumer joins with ("" for
// dynamic membership).
func (c Config) MemberInstance() string {
	if c.Dynamic {
		return ""
	}
	return c.InstanceID
}

// EarliestGroupPrefix prefixes the fresh group of --reset earliest.
const EarliestGroupPrefix = kafkacfg.UsageGroupID + "-earliest-"

// ResolveGroup returns the group the consumer joins. --reset earliest only
// means something for a group without commits, so unless a group was named
// it gets a fresh one: the article's rule can then be shown both ways.
func (c Config) ResolveGroup() string {
	if c.Reset == "earliest" && !c.GroupExplicit {
		return kafkacfg.FreshGroup(EarliestGroupPrefix)
	}
	return c.Group
}

// Main runs consumer-usage until SIGTERM/SIGINT; it returns the exit code.
func Main(args []string) int {
	cfg, err := ParseFlags(args)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	em := status.New(Role)
	log := cli.Logger(Role)
	cli.ExitWithin(ctx, cli.StopBound, em, log)
	err = Run(ctx, cfg, em, log)
	if err != nil {
		err = fmt.Errorf("consumer usage: %w", err)
	}
	return cli.ExitReporting(em, os.Stderr, err)
}
