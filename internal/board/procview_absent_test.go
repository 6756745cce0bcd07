package board

import "testing"

// A process the board does not have reads as zero, its role's facts too:
// a consumer-usage instance scaled away must not panic a reader.
func TestAbsentProcessReadsZero(t *testing.T) {
	b := New([]string{Producer}, Config{Topic: "t"})
	if v := b.Process(UsageInstance(3)); v.Usage == nil || v.Usage.Mode != "" || v.Alive {
		t.Errorf("consumer-usage-3, never added: %+v, want an empty usage view", v)
	}
	if v := b.Process(Current); v.Current == nil || v.Current.CaughtUp {
		t.Errorf("consumer-current, not in this lesson: %+v, want an empty current view", v)
	}
	if v := b.Process(Query); v.Usage != nil || v.Current != nil || v.Producer != nil {
		t.Errorf("consumer-query has no role facts: %+v", v)
	}
}
