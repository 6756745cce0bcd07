// Package kafkacfgtest builds the librdkafka configurations of the tests'
// own clients: an AdminClient and a committed-offsets reader, independent
// of the dashboard's franz-go observer, so a test checks the dashboard's
// numbers with the other client library.
package kafkacfgtest

import (
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// Admin is the config for an AdminClient (lag, watermarks, topic creation).
func Admin(brokers string) *kafka.ConfigMap {
	c := kafkacfg.Base(brokers, "krl-admin")
	// Its metadata requests name one topic: never create it by asking
	// (a producer handle's default is to allow it).
	c["allow.auto.create.topics"] = false
	return &c
}

// IsNoCommits reports whether err from ListConsumerGroupOffsets (or an
// offset fetch) means "this group has never committed". Apache Kafka answers
// with offsets of -1; the embedded kfake broker answers GROUP_ID_NOT_FOUND.
// Both mean the same thing to a lag computation.
func IsNoCommits(err error) bool {
	if err == nil {
		return false
	}
	if kerr, ok := err.(kafka.Error); ok {
		return kerr.Code() == kafka.ErrGroupIDNotFound
	}
	return false
}

// CommittedReader is a consumer handle used only to read groupID's committed
// offsets (Consumer.Committed): it never subscribes, assigns or commits, so
// it neither joins nor changes the group. AdminClient.ListConsumerGroupOffsets
// is avoided on purpose: librdkafka 2.11 dereferences a NULL group handle
// (SIGSEGV, librdkafka#5040) when an admin client's offset fetch is answered
// with a group-level NOT_COORDINATOR, which a fresh Apache Kafka does; a
// consumer handle has a group handle and just reports the error.
func CommittedReader(brokers, groupID string) *kafka.ConfigMap {
	c := kafkacfg.Base(brokers, "krl-offsets")
	c["group.id"] = groupID
	c["enable.auto.commit"] = false
	c["enable.auto.offset.store"] = false
	return &c
}

// LargeProducer is a test's own producer of records up to maxBytes: what
// any client of the topic may write, beyond what the product's producers
// send.
func LargeProducer(brokers string, maxBytes int) *kafka.ConfigMap {
	c := kafkacfg.Producer(brokers)
	(*c)["client.id"] = "krl-test-large-producer"
	(*c)["message.max.bytes"] = maxBytes
	return c
}
