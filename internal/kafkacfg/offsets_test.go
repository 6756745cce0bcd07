package kafkacfg

import (
	"strings"
	"testing"
	"time"
)

func TestOffsetsRetention(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		apache bool
		says   string // "" accepted
	}{
		{5 * time.Second, false, ""},
		{time.Minute, true, ""},
		{3 * time.Minute, true, ""},
		{500 * time.Millisecond, false, "between 1s and"},
		{8 * 24 * time.Hour, false, "between 1s and"},
		{30 * time.Second, true, "at least 1m"},
		{90 * time.Second, true, "whole minutes"},
	} {
		err := CheckOffsetsRetention(c.d, c.apache)
		if (err == nil) != (c.says == "") || err != nil && !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s (apache %v): %v, want %q", c.d, c.apache, err, c.says)
		}
	}
	if got := KfakeOffsetsRetention(5 * time.Second); got["offset.retention.ms"] != "5000" || got["offsets.retention.check.interval.ms"] != "500" {
		t.Errorf("kfake 5s: %v", got)
	}
	// Without the flag the keys are cleared: a data dir keeps an earlier
	// run's broker configs.
	if got := KfakeOffsetsRetention(0); len(got) != 2 || got["offset.retention.ms"] != "" {
		t.Errorf("kfake 0: %v", got)
	}
	if got := ApacheOffsetsRetention(2 * time.Minute); got["offsets.retention.minutes"] != "2" || got["offsets.retention.check.interval.ms"] != "1000" {
		t.Errorf("apache 2m: %v", got)
	}
}
