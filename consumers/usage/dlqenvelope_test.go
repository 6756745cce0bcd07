package usage

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

func headers(m *kafka.Message) map[string]string {
	out := map[string]string{}
	for _, h := range m.Headers {
		out[h.Key] = string(h.Value)
	}
	return out
}

// TestEnvelopeWholeWhenItFits: a record under the limit is forwarded as it
// is, with no cut headers.
func TestEnvelopeWholeWhenItFits(t *testing.T) {
	r := Record{Partition: 2, Offset: 7, Key: []byte("sensor-01"), Value: []byte(`{"a":1}`)}
	m, sent, cut := envelope("t.dlq", "t", r, "not-json: x", 4096)
	h := headers(m)
	if cut || sent != "not-json: x" || !bytes.Equal(m.Key, r.Key) || !bytes.Equal(m.Value, r.Value) {
		t.Fatalf("cut=%v sent=%q key=%q value=%q", cut, sent, m.Key, m.Value)
	}
	if h[HeaderCut] != "" || h[HeaderSourcePartition] != "2" || h[HeaderSourceOffset] != "7" || h[HeaderSourceTopic] != "t" {
		t.Fatalf("headers %v", h)
	}
}

// TestEnvelopeCutToFit: a record over the limit (value, key or reason) is
// cut to a prefix that fits, says so and gives the source's sizes; the
// producer the consumer uses accepts it, and refuses the record whole.
func TestEnvelopeCutToFit(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3_000_000)
	hugeKey := bytes.Repeat([]byte("k"), 2_000_000)
	cases := []struct {
		name         string
		key, value   []byte
		reason       string
		wantKeyWhole bool
	}{
		{"value", []byte("sensor-01"), big, "backwards: odometer went backwards", true},
		{"just over", []byte("sensor-01"), big[:kafkacfg.DeadLetterMaxBytes], "absurd-value: lat 145 out of range", true},
		{"key and reason", hugeKey, []byte(`{"sensor_id":"x"}`), "key-mismatch: key " + strconv.Quote(string(hugeKey)) + " ✓", false},
	}
	p, err := kafka.NewProducer(kafkacfg.DeadLetterProducer("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, c := range cases {
		r := Record{Partition: 1, Offset: 42, Key: c.key, Value: c.value}
		m, sent, cut := envelope("t.dlq", "t", r, c.reason, kafkacfg.DeadLetterMaxBytes)
		h := headers(m)
		switch {
		case !cut || h[HeaderCut] != "true":
			t.Errorf("%s: not marked cut (%v)", c.name, h)
		case h[HeaderValueSize] != strconv.Itoa(len(c.value)) || h[HeaderKeySize] != strconv.Itoa(len(c.key)):
			t.Errorf("%s: sizes %s/%s, want %d/%d", c.name, h[HeaderKeySize], h[HeaderValueSize], len(c.key), len(c.value))
		case h[HeaderSourcePartition] != "1" || h[HeaderSourceOffset] != "42" || h[HeaderReason] != sent:
			t.Errorf("%s: headers %v, sent reason %q", c.name, h, sent)
		case !bytes.HasPrefix(c.value, m.Value) || !bytes.HasPrefix(c.key, m.Key) || !strings.HasPrefix(c.reason, strings.TrimSuffix(sent, "…")):
			t.Errorf("%s: not prefixes of the source", c.name)
		case c.wantKeyWhole != bytes.Equal(m.Key, c.key):
			t.Errorf("%s: key of %d bytes kept %d", c.name, len(c.key), len(m.Key))
		case envelopeSize(m) > kafkacfg.DeadLetterMaxBytes || len(m.Value) < min(len(c.value), kafkacfg.DeadLetterMaxBytes/2):
			t.Errorf("%s: envelope %d bytes with %d of value, limit %d", c.name, envelopeSize(m), len(m.Value), kafkacfg.DeadLetterMaxBytes)
		}
		if err := p.Produce(m, nil); err != nil {
			t.Errorf("%s: the dead-letter producer refuses the envelope: %v", c.name, err)
		}
		whole := &kafka.Message{TopicPartition: m.TopicPartition, Key: c.key, Value: c.value}
		var kerr kafka.Error
		if err := p.Produce(whole, nil); !errors.As(err, &kerr) || kerr.Code() != kafka.ErrMsgSizeTooLarge {
			t.Errorf("%s: the whole record was not refused as too large: %v", c.name, err)
		}
	}
}
