package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func (f *fakeController) AddPartitions(total int) error {
	return f.record(fmt.Sprintf("add-partitions %d", total))
}

// P asks before it grows the topic (a topic cannot shrink): y grows it by
// one partition, any other key cancels and does nothing else.
func TestAddPartitionAsksFirst(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "P")
	if v := m.View(); !strings.Contains(v, "grow sensor-data from 3 to 4 partitions? A topic cannot shrink: keys move for good. y: grow · any other key: cancel") {
		t.Fatalf("P does not ask:\n%s", v)
	}
	if len(ctl.Calls()) != 0 {
		t.Fatalf("P acted before y: %q", ctl.Calls())
	}
	m = press(t, m, "3") // cancels the question, selects nothing
	m = press(t, m, "x")
	if got := ctl.Calls(); !slices.Equal(got, []string{"crash producer"}) {
		t.Fatalf("after a cancelled P: calls %q", got)
	}
	m = press(t, m, "P")
	m = press(t, m, "x")
	if got := ctl.Calls(); len(got) != 1 {
		t.Fatalf("x answered the question and acted: %q", got)
	}
	if v := m.View(); !strings.Contains(v, "P cancelled: sensor-data keeps its 3 partitions") {
		t.Fatalf("no cancel note:\n%s", v)
	}
	m = press(t, m, "P")
	m = press(t, m, "y")
	if got := ctl.Calls(); !slices.Equal(got[1:], []string{"add-partitions 4"}) {
		t.Fatalf("y: calls %q", got)
	}
	if v := m.View(); !strings.Contains(v, "sensor-data has 4 partitions") {
		t.Fatalf("no answer in the status line:\n%s", v)
	}
	// At 80 columns the short question still says what y does.
	m, _ = m.Update(keyMsg("P"))
	small := New(sceneRunning().b, ctl, Options{})
	small.width, small.height, small.confirm = 80, 24, m.(Model).confirm
	if v := small.View(); !strings.Contains(v, "grow sensor-data to 4 partitions for good? y: grow · other key: cancel") {
		t.Fatalf("80 columns:\n%s", v)
	}
}
