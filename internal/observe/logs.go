package observe

import (
	"context"
	"log/slog"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ForwardLogs copies librdkafka's log lines from a client's Logs() channel
// (see kafkacfg.LogsToChannel) to log until the channel closes, which the
// client does on Close. A nil log drops them; the channel is drained anyway
// so librdkafka's log queue cannot grow.
func ForwardLogs(logs chan kafka.LogEvent, log *slog.Logger) {
	for e := range logs {
		if log == nil {
			continue
		}
		log.Log(context.Background(), syslogLevel(e.Level), "librdkafka: "+e.Message,
			"client", e.Name, "tag", e.Tag)
	}
}

// syslogLevel maps librdkafka's syslog severities (0 emerg .. 7 debug).
func syslogLevel(l int) slog.Level {
	switch {
	case l <= 3:
		return slog.LevelError
	case l == 4:
		return slog.LevelWarn
	case l <= 6:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
