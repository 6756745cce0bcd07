package producer

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
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
	acks := fs.String("acks", string(lesson.AcksAll), "acks setting: all (idempotent), 1 (the leader alone; idempotence off) or 0 (no confirmation of receipt; idempotence off); POST /acks?to=all|1|0 switches it")
	fs.StringVar(&cfg.AckedLog, "acked-log", "", "append every acknowledged record to this file, one JSON line each (partition, offset, key, timestamp, acks)")
	fs.StringVar(&cfg.Park, "park", "", "a sensor (sensor-07) that publishes nothing: a machine that stopped")
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
