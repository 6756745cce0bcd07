package lab

import (
	"fmt"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/producer"
)

// Park has the producer stop publishing sensor id (park SENSOR; "none"
// publishes every sensor again): a machine that stopped, whose last
// message stays its latest until retention deletes it. A running producer
// restarts with it (it resumes each sensor from the topic); a stopped one
// starts with it.
func (l *Lab) Park(id string) error {
	if id == "none" {
		id = ""
	}
	if id != "" && !l.isSensor(id) {
		return fmt.Errorf("%s: not one of the producer's %d sensors", id, l.cfg.Sensors)
	}
	l.mu.Lock()
	l.parked = id
	l.mu.Unlock()
	l.setProducerArgs()
	text := "producer publishes every sensor"
	if id != "" {
		text = fmt.Sprintf("producer parks %s: it publishes nothing, its last message stays its latest until retention deletes it", id)
	}
	l.emit(board.Action{At: time.Now(), Text: text})
	if l.sup.Running(board.Producer) {
		return l.Restart(board.Producer)
	}
	return nil
}

// isSensor: id is one of the producer's sensors.
func (l *Lab) isSensor(id string) bool {
	for i := range l.cfg.Sensors {
		if producer.SensorID(i, l.cfg.Sensors) == id {
			return true
		}
	}
	return false
}
