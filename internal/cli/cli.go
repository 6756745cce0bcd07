// Package cli holds what every role's command line shares: the connection
// flags with their environment defaults, and the usage-error convention
// (exit code 2).
package cli

import (
	"github.com/kafka-recovery-lab/krl/internal/status"
	"time"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Exit codes shared by every role.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Defaults when neither flag nor environment says otherwise.
const (
	DefaultBrokers = "127.0.0.1:9092"
	DefaultMongo   = "mongodb://127.0.0.1:27017/krl"
)

// Conn are the connection settings of every role.
type Conn struct {
	Brokers string
	Mongo   string
	Topic   string
}

// Register adds --brokers, --mongo and --topic to fs, defaulting to
// KAFKA_BROKER and MONGO_URI when set.
func (c *Conn) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Brokers, "brokers", envOr("KAFKA_BROKER", DefaultBrokers), "Kafka bootstrap servers (env KAFKA_BROKER)")
	fs.StringVar(&c.Mongo, "mongo", envOr("MONGO_URI", DefaultMongo), "MongoDB URI (env MONGO_URI)")
	fs.StringVar(&c.Topic, "topic", telemetry.DefaultTopic, "topic name")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ErrUsage marks a command-line mistake; Exit maps it to ExitUsage.
var ErrUsage = errors.New("usage error")

// usageError is an ErrUsage that reads as its message alone: Exit prints
// "error: " before it, and "error: usage error: …" would say it twice.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == ErrUsage }

// Usagef returns an ErrUsage with a message.
func Usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// Parse parses args with fs set to ContinueOnError and maps every failure
// (unknown flag, bad value, stray arguments) to ErrUsage.
//
// The flag package would print a bad flag's error and the whole usage
// itself, and Exit prints the error again: Parse keeps it quiet, so the
// error is printed once (by Exit) and the usage only when asked for (-h).
func Parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.Init(fs.Name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if fs.Usage != nil {
				fs.Usage()
			} else {
				fmt.Fprintf(out, "Usage of %s:\n", fs.Name())
				fs.PrintDefaults()
			}
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected arguments: %v", fs.Args())
	}
	return nil
}

// Exit turns a role's error into an exit code, printing it to stderr.
func Exit(stderr io.Writer, err error) int {
	err = redact.Error(err)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, ErrUsage):
		fmt.Fprintln(stderr, "error:", err)
		return ExitUsage
	default:
		fmt.Fprintln(stderr, "error:", err)
		return ExitError
	}
}

// ExitReporting is Exit for a role whose status stream is open: a failure
// is also written there as a one-line Error event, so the dashboard shows
// why the process ended and never keeps it looking alive.
func ExitReporting(em *status.Emitter, stderr io.Writer, err error) int {
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		em.Emit(status.Event{Type: status.Error, Error: redact.String(err.Error())})
	}
	return Exit(stderr, err)
}

// Logger is the human log of a role: text on stderr.
func Logger(role string) *slog.Logger {
	return slog.New(slog.NewTextHandler(redact.Writer(os.Stderr), &slog.HandlerOptions{Level: slog.LevelInfo})).With("role", role)
}

// StopBound is how long a role may take to stop after SIGTERM, whatever is
// down: under the dashboard's 6 s before its SIGKILL, so a stop is always
// graceful (exit 0), never a kill.
const StopBound = 4500 * time.Millisecond

// ExitWithin ends the process with exit 0 once bound has passed since ctx
// ended, if it is still running: a stop cannot wait for a broker or a store
// that is away (a commit, a close, a write of the message in hand). What
// was not finished was not committed either, so it is delivered again to
// the next consumer; the Stopping event says so.
func ExitWithin(ctx context.Context, bound time.Duration, em *status.Emitter, log *slog.Logger) {
	go func() {
		<-ctx.Done()
		time.Sleep(bound)
		log.Warn("stop bound reached: exiting without finishing (a dependency is away); nothing unfinished was committed", "bound", bound)
		em.Emit(status.Event{Type: status.Stopping, Reason: fmt.Sprintf("stop bound %s reached: exiting, unfinished work not committed", bound)})
		os.Exit(ExitOK)
	}()
}

// SignalContext is cancelled on SIGTERM or SIGINT: roles shut down cleanly
// then. SIGKILL, the crash the dashboard demonstrates, cannot be caught.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}

// ListenHint adds what to do to a listen error on a busy port: flag is the
// option that chooses the address ("--http").
func ListenHint(flag string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w (another process uses this port: stop it, or choose another address with %s)", err, flag)
	}
	return err
}
