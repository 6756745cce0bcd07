package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// offsets-expire waits for the broker to expire commits: it says it needs
// a short retention, and refuses, changing nothing, a lab without one.
func TestOffsetsExpireNeedsAShortRetention(t *testing.T) {
	sc, ok := Lookup("offsets-expire")
	if !ok || sc.Needs() != "--offsets-retention 5s" {
		t.Fatalf("needs %q", sc.Needs())
	}
	for _, d := range []time.Duration{5 * time.Second, time.Minute} {
		if err := sc.retentionFits(d); err != nil {
			t.Errorf("retention %s refused: %v", d, err)
		}
	}
	for d, says := range map[time.Duration]string{0: "the broker's default (7 days)", 2 * time.Minute: "keeps them 2m"} {
		err := sc.retentionFits(d)
		var r refusal
		if !errors.As(err, &r) || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "--offsets-retention 5s") {
			t.Errorf("retention %s: %v", d, err)
		}
	}
	if other, _ := Lookup("replay"); other.retentionFits(0) != nil || other.Needs() != "" {
		t.Error("replay needs a retention")
	}
}
