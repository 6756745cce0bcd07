package usage

import (
	"fmt"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// waitBroker asks for the topic's metadata until the broker answers and
// knows the topic; false means ctx ended first.
func (k *kafkaLoop) waitBroker() bool {
	topic := k.cfg.Conn.Topic
	for {
		err := k.topicReachable(3000)
		if err == nil {
			k.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers})
			k.log.Info("broker connected", "brokers", k.cfg.Conn.Brokers, "topic", topic)
			return true
		}
		if k.ctx.Err() != nil {
			return false
		}
		k.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers, Error: err.Error()})
		k.log.Warn("broker unreachable; retrying", "brokers", k.cfg.Conn.Brokers, "error", err)
		select {
		case <-k.ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

func (k *kafkaLoop) topicReachable(timeoutMs int) error {
	topic := k.cfg.Conn.Topic
	md, err := k.consumer.GetMetadata(&topic, false, timeoutMs)
	if err != nil {
		return err
	}
	t, ok := md.Topics[topic]
	switch {
	case !ok:
		return fmt.Errorf("topic %s not in metadata", topic)
	case t.Error.Code() != kafka.ErrNoError:
		return fmt.Errorf("topic %s: %w", topic, t.Error)
	case len(t.Partitions) == 0:
		return fmt.Errorf("topic %s has no partitions", topic)
	}
	return nil
}

func (k *kafkaLoop) kafkaError(e kafka.Error) error {
	if e.IsFatal() {
		if e.Code() == kafka.ErrFencedInstanceID {
			return errFenced{err: e}
		}
		return fmt.Errorf("kafka: %w", e)
	}
	switch e.Code() {
	case kafka.ErrAllBrokersDown, kafka.ErrTransport, kafka.ErrResolve:
		k.brokerDown = true
		if time.Since(k.lastRetrying) >= 2*time.Second {
			k.lastRetrying = time.Now()
			k.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers, Error: e.Error()})
			k.log.Warn("broker unreachable; librdkafka keeps retrying", "error", e)
		}
	default:
		k.log.Warn("kafka", "error", e, "code", e.Code())
	}
	return nil
}

// brokerBack reports the broker reachable again after Retrying.
func (k *kafkaLoop) brokerBack() {
	if k.brokerDown {
		k.brokerDown = false
		k.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers})
		k.log.Info("broker reachable again")
	}
}
