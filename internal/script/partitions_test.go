package script

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

func (f *fakeTarget) AddPartitions(n int) error { return f.record(fmt.Sprintf("add-partitions %d", n)) }
func (f *fakeTarget) Park(sensor string) error  { return f.record("park " + sensor) }
func (f *fakeTarget) SetRetention(_ context.Context, d time.Duration) error {
	return f.record("retention " + d.String())
}
func (f *fakeTarget) RecreateTopic(ctx context.Context) error {
	return f.record("recreate-topic")
}
func (f *fakeTarget) PublishHistory(ctx context.Context, n int) error {
	return f.record(fmt.Sprintf("backlog %d", n))
}

// add-partitions takes the new count, recreate-topic nothing, backlog a
// message count; each reaches the target.
func TestPartitionsVerbs(t *testing.T) {
	acts, err := ParseString("add-partitions 4\nrecreate-topic\nbacklog 30000\nretention 20s\nwait-deleted 30s\npark sensor-07\nwait-last-deleted sensor-07 30s\npark none\n")
	if err != nil {
		t.Fatal(err)
	}
	if acts[0].Kind != action.AddPartitions || acts[0].Count != 4 || acts[1].Kind != action.RecreateTopic {
		t.Fatalf("parsed %+v", acts)
	}
	for _, a := range acts {
		if back, _ := ParseString(a.String()); len(back) != 1 || back[0].Validate() != nil || a.Validate() != nil {
			t.Fatalf("%q does not parse back", a.String())
		}
	}
	target := &fakeTarget{}
	if err := (Runner{Target: target}).Run(context.Background(), acts); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(target.log(), ", "); got != "add-partitions 4, recreate-topic, backlog 30000, retention 20s, park sensor-07, park none" {
		t.Fatalf("calls %s", got)
	}
	for src, want := range map[string]string{
		"add-partitions":              "missing partition count",
		"add-partitions 1":            "bad partition count",
		"add-partitions 33":           "bad partition count",
		"add-partitions four":         "bad partition count",
		"add-partitions 4 more":       "unexpected",
		"recreate-topic now":          "unexpected",
		"backlog":                     "missing message count",
		"backlog 0":                   "bad message count",
		"backlog 30000 more":          "unexpected",
		"retention":                   "missing",
		"retention soon":              "bad",
		"park":                        "missing sensor",
		"park producer":               "bad sensor",
		"wait-last-deleted 30s":       "missing sensor",
		"wait-last-deleted sensor-07": "missing duration",
	} {
		if _, err := ParseString(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
