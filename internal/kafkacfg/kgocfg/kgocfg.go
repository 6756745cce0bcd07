// Package kgocfg builds the franz-go (kgo) client options of the
// dashboard's observers: the audit reader and the offsets, layout and
// topic probes. It sits beside internal/kafkacfg, which builds the
// librdkafka configurations of the clients under test (the producer and
// the consumers): one place per client library, so the dashboard's
// packages import no cgo client and hold no librdkafka handle.
package kgocfg

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Client is an observer's client: never creates a topic by asking, gives
// up on an unreachable broker quickly (the caller's deadline bounds every
// request anyway) and logs through log (nil: discarded), never to stderr,
// which is the dashboard's terminal.
func Client(brokers, clientID string, log *slog.Logger, extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(brokers, ",")...),
		kgo.ClientID(clientID),
		kgo.DialTimeout(5 * time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
	}
	if log != nil {
		opts = append(opts, kgo.WithLogger(slogLogger{log}))
	}
	return append(opts, extra...)
}

// Audit is the audit reader's: every partition assigned by the caller
// (kgo.ConsumePartitions, no group), nothing committed.
func Audit(brokers string, log *slog.Logger, partitions map[string]map[int32]kgo.Offset) []kgo.Opt {
	return Client(brokers, "krl-audit", log,
		kgo.ConsumePartitions(partitions),
		// A record appended is fetched at once, not after a fetch wait.
		kgo.FetchMaxWait(500*time.Millisecond),
	)
}

// AuditMetadata is the audit reader's metadata client, which learns the
// topic's partitions: its answers are cached for a second, not franz-go's
// default five (kadm's metadata requests answer from that cache), so a
// partition added to the topic is read within about a second.
func AuditMetadata(brokers string, log *slog.Logger) []kgo.Opt {
	return Client(brokers, "krl-audit-metadata", log, kgo.MetadataMinAge(time.Second))
}

// slogLogger adapts kgo's logger to slog; kgo's info lines (connections
// opened and closed) are debug here: they are routine.
type slogLogger struct{ log *slog.Logger }

func (l slogLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l slogLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	}
	l.log.Log(context.Background(), lv, "franz-go: "+msg, keyvals...)
}
