package usage

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// TestAutoCommitFailuresLogged: a failing auto commit that is not a loss
// of ownership is logged when it starts and when commits work again,
// once each, not at every interval; "no offset stored" is no failure.
func TestAutoCommitFailuresLogged(t *testing.T) {
	var out bytes.Buffer
	k := &kafkaLoop{log: slog.New(slog.NewTextHandler(&out, nil))}
	notCoord := kafka.NewError(kafka.ErrNotCoordinator, "Broker: Not coordinator", false)
	k.committedEvent(kafka.OffsetsCommitted{Error: kafka.NewError(kafka.ErrNoOffset, "Local: No offset stored", false)})
	for range 3 {
		k.committedEvent(kafka.OffsetsCommitted{Error: notCoord})
	}
	k.committedEvent(kafka.OffsetsCommitted{})
	k.committedEvent(kafka.OffsetsCommitted{})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "auto commit failed") || !strings.Contains(lines[0], "Not coordinator") ||
		!strings.Contains(lines[1], "auto commit works again") {
		t.Fatalf("log:\n%s", out.String())
	}
}
