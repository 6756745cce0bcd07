package board

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

const hostile = "\x1b]0;PWNED\a"

// TestShownInput: what the board keeps and reports of untrusted text holds
// no control character and no URI password, whatever input carried it.
func TestShownInput(t *testing.T) {
	b := New([]string{Current, Usage}, Config{Mongo: "mongodb://u:pw@h/krl", Topic: "t"})
	at := time.Unix(1000, 0)
	b.Apply(ProcStarted{Name: Current, PID: 1, At: at})
	b.Apply(ProcLog{Name: Current, At: at, Line: "log " + hostile + " mongodb://u:pw@h/krl"})
	b.Apply(ProcStatus{Name: Usage, At: at, Event: status.Event{Type: status.Error, Error: "boom " + hostile}})
	snap := SensorsSnapshot{At: at, Sensors: []SensorState{{SensorID: hostile, Timestamp: 1}}, CaughtUp: true}
	b.Apply(snap)
	b.Apply(UsageSnapshot{At: at, Err: errors.New("query " + hostile)})
	if snap.Sensors[0].SensorID != hostile {
		t.Fatal("the input itself was changed: another board shares it")
	}
	rep := fmt.Sprintf("%+v", b.Report())
	for _, e := range b.EventsSince(0) {
		rep += e.String()
	}
	rep += strings.Join(b.Tail(Current, 10), "\n")
	if strings.ContainsAny(rep, "\x1b\a") || strings.Contains(rep, "pw@") {
		t.Fatalf("raw control characters or a password kept:\n%q", rep)
	}
	for _, want := range []string{"␛]0;PWNED␇", "u:***@h"} {
		if !strings.Contains(rep, want) {
			t.Errorf("%q not shown:\n%s", want, rep)
		}
	}
}

func BenchmarkShownInput(b *testing.B) {
	snap := SensorsSnapshot{Sensors: make([]SensorState, 1000)}
	for i := range snap.Sensors {
		snap.Sensors[i] = SensorState{SensorID: fmt.Sprintf("sensor-%04d", i), Timestamp: int64(i)}
	}
	for b.Loop() {
		shownInput(snap)
	}
}
