package lab

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// DefaultRetention is the short retention the T key gives the topic when
// --retention did not name one.
const DefaultRetention = 20 * time.Second

// SetRetention gives the topic a short retention (retention DURATION, the
// T key; d 0: --retention's, else DefaultRetention), with small segments
// (kafkacfg.RetentionTopicConfig). What retention deletes is gone: the key
// asks first. The lab keeps the setting and sets it again on a recreated
// topic.
func (l *Lab) SetRetention(ctx context.Context, d time.Duration) error {
	if l.offsets == nil {
		return errNotLaunched
	}
	if d == 0 {
		d = cmp.Or(l.cfg.Retention, DefaultRetention)
	}
	if d < kafkacfg.RetentionLeast || d > kafkacfg.RetentionMost {
		return fmt.Errorf("retention %s: between %s and %s", d, kafkacfg.RetentionLeast, kafkacfg.RetentionMost)
	}
	if err := l.applyRetention(ctx, d); err != nil {
		return err
	}
	l.mu.Lock()
	l.retention = d
	l.mu.Unlock()
	return nil
}

// applyRetention sets d's configs on the topic and tells the board.
func (l *Lab) applyRetention(ctx context.Context, d time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, topicTimeout)
	defer cancel()
	if err := l.offsets.AlterTopicConfig(cctx, l.cfg.Topic, kafkacfg.RetentionTopicConfig(d)); err != nil {
		return err
	}
	l.emit(board.RetentionSet{At: time.Now(), Topic: l.cfg.Topic, Retention: d})
	return nil
}

// retentionSetting is the short retention the lab set (0: none).
func (l *Lab) retentionSetting() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retention
}
