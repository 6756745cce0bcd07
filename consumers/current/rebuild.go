package current

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// changelogReadTimeout bounds reading the changelog at a start: past it
// the start falls back to a replay.
const changelogReadTimeout = 30 * time.Second

// span is a partition's low and high watermarks.
type span struct{ low, high int64 }

// rebuild decides, before the first record is read, what this start
// rebuilds its state from, seeds the state with it and says so (one
// status.Rebuild). Anything that cannot be trusted (no snapshot, an
// unreadable or foreign one, no changelog) falls back to the replay the
// seed does, with the reason.
func (c *consumer) rebuild(k *kafka.Consumer) {
	began := time.Now()
	ev := status.Event{Type: status.Rebuild, Strategy: string(c.cfg.Rebuild)}
	spans, err := c.watermarks(k)
	c.lows = map[int32]int64{}
	for p, s := range spans {
		c.lows[p] = s.low
	}
	topicID := c.topicID(k)
	asked := time.Since(began)
	var r restored
	why := ""
	switch {
	case c.cfg.Rebuild == lesson.Replay:
	case err != nil:
		why = "the topic's offsets are unknown: " + err.Error()
	case c.cfg.Rebuild == lesson.Snapshot:
		r, ev.SnapshotAt, why = c.fromSnapshot(spans, topicID)
	case c.cfg.Rebuild == lesson.Changelog:
		r, ev.Count, ev.Marks, why = c.fromChangelog(spans, topicID)
	}
	if c.cfg.Rebuild != lesson.Replay && why == "" {
		c.st.restore(r)
		ev.Sensors = len(r.sensors)
	}
	ev.Reason = why
	start := map[int32]int64{}
	for p, s := range spans {
		start[p] = s.low
		if off, ok := c.st.resumeAt(p); ok {
			start[p] = off
		}
	}
	for _, p := range slices.Sorted(maps.Keys(start)) {
		ev.Positions = append(ev.Positions, status.Position{Partition: p, Offset: start[p], HighWatermark: -1})
	}
	took := []any{"asking", asked.Round(time.Millisecond), "took", time.Since(began).Round(time.Millisecond)}
	if why != "" {
		c.log.Warn("rebuild falls back to a replay from earliest", append([]any{"strategy", c.cfg.Rebuild, "reason", why}, took...)...)
	} else {
		c.log.Info("rebuild", append([]any{"strategy", c.cfg.Rebuild, "sensors", ev.Sensors, "from", offsetsText(start)}, took...)...)
	}
	c.em.Emit(ev)
	c.prep.rebuilt(topicID)
}

// watermarks reads every partition's watermarks.
func (c *consumer) watermarks(k *kafka.Consumer) (map[int32]span, error) {
	topic := c.cfg.Topic
	md, err := k.GetMetadata(&topic, false, int(brokerTimeout/time.Millisecond))
	if err != nil {
		return nil, err
	}
	out := map[int32]span{}
	for _, p := range md.Topics[topic].Partitions {
		low, high, err := k.QueryWatermarkOffsets(topic, p.ID, int(brokerTimeout/time.Millisecond))
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", p.ID, err)
		}
		out[p.ID] = span{low, high}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", topic)
	}
	return out, nil
}

// topicID is the topic's id as the broker says it ("" when it does not).
func (c *consumer) topicID(k *kafka.Consumer) string {
	a, err := kafka.NewAdminClientFromConsumer(k)
	if err != nil {
		return ""
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), brokerTimeout)
	defer cancel()
	res, err := a.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames([]string{c.cfg.Topic}))
	if err != nil || len(res.TopicDescriptions) != 1 || res.TopicDescriptions[0].Error.Code() != kafka.ErrNoError {
		c.log.Warn("topic id unknown", "err", err)
		return ""
	}
	id := res.TopicDescriptions[0].TopicID
	if id == (kafka.UUID{}) {
		return ""
	}
	return id.String()
}

// fromSnapshot is the snapshot's state, or why it cannot be used.
func (c *consumer) fromSnapshot(spans map[int32]span, topicID string) (restored, time.Time, string) {
	s, err := loadSnapshot(c.cfg.Snapshot)
	switch {
	case errors.Is(err, errNoSnapshot):
		return restored{}, time.Time{}, "no snapshot written yet"
	case err != nil:
		return restored{}, time.Time{}, "snapshot unreadable: " + err.Error()
	}
	if why := foreign("snapshot", s.Topic, s.TopicID, c.cfg.Topic, topicID, s.Through, spans); why != "" {
		return restored{}, time.Time{}, why
	}
	return restored{cut: cut{sensors: s.Sensors, refs: s.References, through: s.Through}}, s.TakenAt, ""
}

// fromChangelog is the changelog's state, how many records it read, or
// why it cannot be used.
func (c *consumer) fromChangelog(spans map[int32]span, topicID string) (restored, int64, int64, string) {
	topic := kafkacfg.ChangelogTopic(c.cfg.Topic)
	cl, err := readChangelog(c.cfg.Brokers, topic, changelogReadTimeout)
	switch {
	case err != nil:
		return restored{}, cl.read, cl.marks, fmt.Sprintf("changelog %s unreadable: %v", topic, err)
	case cl.mark == nil && cl.read == 0:
		return restored{}, 0, 0, fmt.Sprintf("changelog %s is empty (nothing published yet)", topic)
	case cl.mark == nil:
		return restored{}, cl.read, cl.marks, fmt.Sprintf("changelog %s has no complete publication yet", topic)
	}
	if why := foreign("changelog", cl.mark.Topic, cl.mark.TopicID, c.cfg.Topic, topicID, cl.mark.Through, spans); why != "" {
		return restored{}, cl.read, cl.marks, why
	}
	return cl.restored(topicID), cl.read, cl.marks, ""
}

// foreign says why a saved state (a snapshot, a changelog's mark) is not
// this topic's, "" when it is: another topic, an earlier topic of the
// same name, or offsets the topic does not have.
func foreign(what, topic, id, wantTopic, wantID string, through map[int32]int64, spans map[int32]span) string {
	switch {
	case topic != wantTopic:
		return fmt.Sprintf("the %s is of topic %s, not %s", what, topic, wantTopic)
	case id != "" && wantID != "" && id != wantID:
		return fmt.Sprintf("the %s is of an earlier topic %s (id %s, now %s): it was created again", what, topic, id, wantID)
	}
	for _, p := range slices.Sorted(maps.Keys(through)) {
		s, ok := spans[p]
		switch {
		case !ok:
			return fmt.Sprintf("the %s has partition %d, the topic has not", what, p)
		case through[p] > s.high:
			return fmt.Sprintf("the %s covers partition %d up to offset %d, the topic ends at %d", what, p, through[p], s.high)
		case through[p] < s.low:
			return fmt.Sprintf("the %s covers partition %d up to offset %d, the topic now begins at %d", what, p, through[p], s.low)
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
