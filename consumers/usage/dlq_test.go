package usage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// memDeadLetter is an in-memory DeadLetter: what was forwarded, in order,
// and an error to fail forwards with.
type memDeadLetter struct {
	sent []Record
	why  map[[2]int64]string
	fail error
}

func (m *memDeadLetter) Forwarded(p int32, off int64) (string, bool) {
	r, ok := m.why[[2]int64{int64(p), off}]
	return r, ok
}

func (m *memDeadLetter) Forward(_ context.Context, r Record, reason string) error {
	if m.fail != nil {
		return m.fail
	}
	if m.why == nil {
		m.why = map[[2]int64]string{}
	}
	m.sent = append(m.sent, r)
	m.why[[2]int64{int64(r.Partition), r.Offset}] = reason
	return nil
}

// TestInvalidForwardedOnceBeforeDone: every invalid record is forwarded
// before Handle returns, with its reason; delivered again (a new
// processor, as after a restart, sharing what the topic holds) it is
// counted and skipped but not forwarded again, including a backwards record
// now behind the checkpoint; a forward that fails leaves the record not done.
func TestInvalidForwardedOnceBeforeDone(t *testing.T) {
	_, st := freshDB(t)
	recs := []Record{
		rec("s1", 0, 0, reading(t, "s1", 0, 10000, 50000)),
		rec("s1", 0, 1, []byte("{not json")),
		rec("s1", 0, 2, reading(t, "s1", 1, 9000, 50000)), // backwards
		rec("s1", 0, 3, reading(t, "s1", 2, 10100, 50100)),
	}
	dl := &memDeadLetter{}
	p, _ := newTestProcessor(t, st, lesson.Guarded, nil)
	p.SetDeadLetter(dl)
	feed(t, p, recs...)
	if len(dl.sent) != 2 || dl.sent[0].Offset != 1 || dl.sent[1].Offset != 2 {
		t.Fatalf("forwarded %+v, want offsets 1 and 2", dl.sent)
	}
	if r, _ := dl.Forwarded(0, 2); !strings.HasPrefix(r, string(telemetry.Backwards)+": ") {
		t.Fatalf("reason of offset 2: %q", r)
	}

	// A restart that lost the commits: everything is delivered again.
	p2, _ := newTestProcessor(t, st, lesson.Guarded, nil)
	p2.SetDeadLetter(dl)
	res := feed(t, p2, recs...)
	if len(dl.sent) != 2 {
		t.Fatalf("forwarded again: %+v", dl.sent[2:])
	}
	if s := p2.Stats(); s.Invalid != 2 || s.Replayed != 2 {
		t.Fatalf("after the replay: %+v, want 2 invalid and 2 replayed", s)
	}
	if res[2].Outcome != Invalid {
		t.Fatalf("the backwards record behind the checkpoint is %v, want invalid", res[2].Outcome)
	}

	// A forward that fails: the record is not done.
	p3, _ := newTestProcessor(t, st, lesson.Guarded, nil)
	p3.SetDeadLetter(&memDeadLetter{fail: errors.New("broker gone")})
	if _, err := p3.Handle(context.Background(), rec("s1", 0, 9, []byte("nope"))); err == nil {
		t.Fatal("a failed forward returned no error: the offset would be committed")
	}
	if s := p3.Stats(); s.Invalid != 0 {
		t.Fatalf("a record not forwarded was counted: %+v", s)
	}
}
