package serve

import (
	"errors"
	"sync/atomic"

	"github.com/kafka-recovery-lab/krl/internal/lab"
)

// attendeeControl is an attendee's keys on their own lab: the lab itself,
// counting the crashes they cause for the server's table.
type attendeeControl struct {
	*lab.Lab
	crashes *atomic.Int64
}

func (c attendeeControl) Crash(name string) error {
	err := c.Lab.Crash(name)
	if err == nil {
		c.crashes.Add(1)
	}
	return err
}

// errReadOnly answers every action of a watcher: the read-only model
// refuses the keys first; this is the second lock on the door.
var errReadOnly = errors.New("read-only view: this is the presenter's lab")

// readOnlyControl acts on nothing.
type readOnlyControl struct{}

func (readOnlyControl) Crash(string) error                      { return errReadOnly }
func (readOnlyControl) Stop(string) error                       { return errReadOnly }
func (readOnlyControl) Start(string) error                      { return errReadOnly }
func (readOnlyControl) Restart(string) error                    { return errReadOnly }
func (readOnlyControl) ToggleFreeze(string) (bool, error)       { return false, errReadOnly }
func (readOnlyControl) TogglePause() (bool, error)              { return false, errReadOnly }
func (readOnlyControl) ToggleUsageMode() (string, bool, error)  { return "", false, errReadOnly }
func (readOnlyControl) ToggleUsageReset() (string, bool, error) { return "", false, errReadOnly }
func (readOnlyControl) ResetLab() error                         { return errReadOnly }
func (readOnlyControl) InjectBad(int) (int, error)              { return 0, errReadOnly }
func (readOnlyControl) Scale(int) error                         { return errReadOnly }
func (readOnlyControl) ToggleAcks() (string, error)             { return "", errReadOnly }
func (readOnlyControl) Tail(string, int) []string               { return nil }
func (readOnlyControl) ArmCrash(string, string) error           { return errReadOnly }

func (readOnlyControl) CycleRebuild() (string, error) { return "", errReadOnly }
func (readOnlyControl) AddPartitions(int) error       { return errReadOnly }
