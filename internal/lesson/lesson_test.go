package lesson

import "testing"

func TestParse(t *testing.T) {
	if m, err := ParseMode("guarded"); err != nil || m != Guarded {
		t.Errorf("ParseMode(guarded) = %q, %v", m, err)
	}
	if _, err := ParseMode("careful"); err == nil || err.Error() != `unknown mode "careful" (want naive or guarded)` {
		t.Errorf("ParseMode(careful) error %v", err)
	}
	if r, err := ParseReset("earliest"); err != nil || r != Earliest {
		t.Errorf("ParseReset(earliest) = %q, %v", r, err)
	}
	if _, err := ParseReset("middle"); err == nil {
		t.Error("ParseReset(middle) accepted")
	}
	for in, want := range map[string]CrashPoint{"none": NoCrashPoint,
		"after-delta": AfterDelta, "after-checkpoint": AfterCheckpoint} {
		if got, err := ParseCrashPoint(in); err != nil || got != want {
			t.Errorf("ParseCrashPoint(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseArmablePoint("none"); err == nil {
		t.Error("none is not armable")
	}
	for _, bad := range []string{"", "before-delta"} {
		if _, err := ParseCrashPoint(bad); err == nil {
			t.Errorf("ParseCrashPoint(%q) accepted", bad)
		}
	}
}

func TestCycles(t *testing.T) {
	p := NoCrashPoint
	var seen []CrashPoint
	for range 4 {
		p = NextCrashPoint(p)
		seen = append(seen, p)
	}
	want := []CrashPoint{AfterDelta, AfterCheckpoint, NoCrashPoint, AfterDelta}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("cycle %v, want %v", seen, want)
		}
	}
	if NextCrashPoint("") != AfterDelta {
		t.Error("an unarmed process starts the cycle at after-delta")
	}
	if Naive.Other() != Guarded || Guarded.Other() != Naive || Latest.Other() != Earliest || Earliest.Other() != Latest {
		t.Error("Other")
	}
}

func TestRebuildCycle(t *testing.T) {
	r := Replay
	for _, want := range []Rebuild{Snapshot, Changelog, Replay} {
		if r = r.Next(); r != want {
			t.Fatalf("next %s, want %s", r, want)
		}
	}
	if Rebuild("").Next() != Snapshot {
		t.Error("an unknown strategy counts as replay")
	}
	if _, err := ParseRebuild("compact"); err == nil {
		t.Error("compact parsed")
	}
	for _, r := range Rebuilds {
		if got, err := ParseRebuild(string(r)); err != nil || got != r {
			t.Errorf("parse %s: %v %v", r, got, err)
		}
	}
}

func TestAcks(t *testing.T) {
	for _, s := range []string{"all", "1", "0"} {
		a, err := ParseAcks(s)
		if err != nil || string(a) != s {
			t.Fatalf("ParseAcks(%q) = %q, %v", s, a, err)
		}
		if a.Other().Other().Other() != a || a.Other() == a {
			t.Fatalf("%q.Other() cycle broken: %q", a, a.Other())
		}
	}
	if AcksAll.Other() != AcksLeader || AcksLeader.Other() != AcksNone || AcksNone.Other() != AcksAll {
		t.Fatal("the a key does not cycle all, 1, 0")
	}
	if _, err := ParseAcks("2"); err == nil {
		t.Fatal("acks 2 accepted")
	}
	if AcksLeader.Idempotent() || AcksNone.Idempotent() || !AcksAll.Idempotent() {
		t.Fatal("only acks=all is idempotent")
	}
	if AcksNone.Confirmed() || !AcksLeader.Confirmed() || !AcksAll.Confirmed() {
		t.Fatal("only acks=0 goes unconfirmed")
	}
}
