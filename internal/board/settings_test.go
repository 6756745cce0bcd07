package board

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestSettingsShowEachChange: one announcement of the lab's settings puts
// on the timeline what changed since the last one, in the words of each
// change's own input, and nothing for what stayed.
func TestSettingsShowEachChange(t *testing.T) {
	procs := []string{Producer, Current, Usage, "consumer-usage-2"}
	byInputs := New(procs, Config{})
	bySettings := New(procs, Config{})
	base := Settings{UsageMode: "naive", UsageReset: "latest", Rebuild: "replay", Acks: "all"}
	steps := []struct {
		inputs []Input
		change func(*Settings)
	}{
		{[]Input{Mode{At: at(1), UsageMode: "guarded"}}, func(s *Settings) { s.UsageMode = "guarded" }},
		{[]Input{Rebuild{At: at(2), Strategy: "snapshot"}}, func(s *Settings) { s.Rebuild = "snapshot" }},
		{[]Input{AcksSetting{At: at(3), Acks: "1"}}, func(s *Settings) { s.Acks = "1" }},
		{[]Input{EffectDelaySet{Name: "consumer-usage-2", At: at(4), Delay: 8 * time.Second}},
			func(s *Settings) { s.EffectDelays = map[string]time.Duration{"consumer-usage-2": 8 * time.Second} }},
		{[]Input{AcksSetting{At: at(5), Acks: "all", Err: errors.New("no answer")}}, func(s *Settings) { s.Acks, s.AcksErr = "all", errors.New("no answer") }},
		{nil, func(*Settings) {}},
	}
	for i, st := range steps {
		for _, in := range st.inputs {
			byInputs.Apply(in)
		}
		base.At, base.AcksErr = at(float64(i+1)), nil
		st.change(&base)
		bySettings.Apply(base)
	}
	text := func(b *Board) []string {
		var out []string
		for _, e := range b.Events() {
			out = append(out, e.String())
		}
		return out
	}
	if got, want := text(bySettings), text(byInputs); !slices.Equal(got, want) || len(want) != 5 {
		t.Fatalf("events\n%q\nwant\n%q", got, want)
	}
	if m, r := bySettings.UsageConfig(); m != "guarded" || r != "latest" || bySettings.Rebuild() != "snapshot" ||
		bySettings.AcksSetting() != "all" || bySettings.EffectDelay("consumer-usage-2") != 8*time.Second {
		t.Fatalf("shown: %s %s %s %s %s", m, r, bySettings.Rebuild(), bySettings.AcksSetting(), bySettings.EffectDelay("consumer-usage-2"))
	}
}
