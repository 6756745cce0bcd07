package usage

import (
	"strconv"
	"unicode/utf8"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Headers a dead-letter record carries only when it was cut to fit: the
// topic may hold records larger than the dead-letter producer may send
// (kafkacfg.DeadLetterMaxBytes), and a poison record that cannot be
// forwarded would stop consumer-usage on it at every start.
const (
	// HeaderCut is "true" on a record whose key, value or reason was cut.
	HeaderCut = "cut"
	// HeaderKeySize and HeaderValueSize give the source record's sizes in
	// bytes (the dead-letter record holds a prefix of each).
	HeaderKeySize   = "source-key-size"
	HeaderValueSize = "source-value-size"
)

// A cut envelope keeps at most this much of the key and of the reason (a
// key-mismatch reason quotes the key): the rest of the budget is the value's.
const (
	cutKeyBytes    = 1 << 10
	cutReasonBytes = 1 << 10
)

// envelopeOverhead bounds what a record of one message costs beyond its
// key, value and header bytes: the batch header (61 bytes), the record's
// varints and each header's two length varints, with room to spare.
const envelopeOverhead = 512

// envelope is the dead-letter record of r: whole when it fits in limit
// bytes, else (cut) with the reason and key cut to a prefix, the value cut
// to the rest of the budget, and the cut headers with the source's sizes.
// sent is the reason as the record holds it.
func envelope(topic, source string, r Record, reason string, limit int) (msg *kafka.Message, sent string, cut bool) {
	msg = &kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            r.Key,
		Value:          r.Value,
		Headers: []kafka.Header{
			{Key: HeaderReason, Value: []byte(reason)},
			{Key: HeaderSourceTopic, Value: []byte(source)},
			{Key: HeaderSourcePartition, Value: []byte(strconv.FormatInt(int64(r.Partition), 10))},
			{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		},
	}
	if envelopeSize(msg) <= limit {
		return msg, reason, false
	}
	sent = cutText(reason, cutReasonBytes)
	msg.Headers[0].Value = []byte(sent)
	msg.Key = r.Key[:min(len(r.Key), cutKeyBytes)]
	msg.Headers = append(msg.Headers,
		kafka.Header{Key: HeaderCut, Value: []byte("true")},
		kafka.Header{Key: HeaderKeySize, Value: []byte(strconv.Itoa(len(r.Key)))},
		kafka.Header{Key: HeaderValueSize, Value: []byte(strconv.Itoa(len(r.Value)))},
	)
	msg.Value = nil
	room := max(limit-envelopeSize(msg), 0)
	msg.Value = r.Value[:min(len(r.Value), room)]
	return msg, sent, true
}

// envelopeSize is what msg counts against a producer's message.max.bytes,
// over-estimated by envelopeOverhead.
func envelopeSize(msg *kafka.Message) int {
	n := envelopeOverhead + len(msg.Key) + len(msg.Value)
	for _, h := range msg.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// cutText is s cut to at most n bytes at a rune boundary, marked with "…"
// when cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	end := max(n-len(mark), 0)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + mark
}
