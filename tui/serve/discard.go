package serve

import (
	"context"
	"errors"
	"os"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// discard deletes what a dropped lab left behind: its topics (with their
// dead-letter and changelog topics) on the shared broker, its database on
// the shared store and its run directory, so labs that come and go under
// --auth open do not pile up. Only the server's log keeps its id.
func (s *Server) discard(ctx context.Context, id string) error {
	cfg, err := s.LabConfig(id)
	if err != nil {
		return err
	}
	var errs []error
	if off, err := observe.NewOffsets(cfg.Brokers, s.cfg.Log); err != nil {
		errs = append(errs, err)
	} else {
		for _, topic := range []string{cfg.Topic, kafkacfg.DeadLetterTopic(cfg.Topic), kafkacfg.ChangelogTopic(cfg.Topic)} {
			errs = append(errs, off.DeleteTopic(ctx, topic))
		}
		off.Close()
	}
	if db, err := store.Connect(ctx, cfg.Mongo); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, db.DropDatabase(ctx))
		errs = append(errs, db.Close(ctx))
	}
	errs = append(errs, os.RemoveAll(cfg.RunDir))
	return errors.Join(errs...)
}
