package lab

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// AckedLogName is the producer's log of acknowledged records in the run
// directory (producer --acked-log).
const AckedLogName = "acked.ndjson"

// AckedLogPath is where the producer of a run in runDir logs what the
// broker acknowledged.
func AckedLogPath(runDir string) string { return filepath.Join(runDir, AckedLogName) }

// acksSwitchTimeout bounds a switch: the producer flushes for up to 4 s,
// then makes a new producer.
const acksSwitchTimeout = 15 * time.Second

func (l *Lab) setAcksLocked(a lesson.Acks) error {
	was := l.settingsNow().acks
	l.changeSettings(nil, func(s *settings) { s.acks = a })
	l.setProducerArgs()
	if !l.sup.Running(board.Producer) {
		l.Note(fmt.Sprintf("the producer is not running: acks=%s applies when it starts (r starts it)", a))
		return nil
	}
	if err := l.postAcks(a); err != nil {
		l.changeSettings(err, func(s *settings) { s.acks = was })
		l.setProducerArgs()
		return err
	}
	return nil
}

// setProducerArgs makes the producer's next start use the settings' acks
// (before the launch it is not defined yet: the launch reads them).
func (l *Lab) setProducerArgs() {
	if err := l.sup.SetArgs(board.Producer, l.roleArgs(board.Producer)); err != nil && !errors.Is(err, supervisor.ErrUnknown) {
		l.log.Warn("producer arguments not updated", "err", err)
	}
}

// postAcks asks the running producer to switch (POST /acks) and returns
// once its new producer runs.
func (l *Lab) postAcks(a lesson.Acks) error {
	// A producer opens its endpoint once it has read the topic, so while
	// the broker is away this waits for the broker too.
	addr, err := l.awaitHTTP(board.Producer, 40*time.Second)
	if err != nil {
		return fmt.Errorf("the producer is not publishing yet (it waits for the broker): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acksSwitchTimeout)
	defer cancel()
	return postControl(ctx, addr, "/acks", url.Values{"to": {string(a)}}, "acks", nil)
}
