package main

import (
	"slices"
	"testing"
)

// TestRetime: raw frames captured at 20/s on paper but really about 5/s,
// laid out by VHS as a 25/s GIF: the GIF lasts as long as the capture did;
// no delay is below what browsers honour.
func TestRetime(t *testing.T) {
	times := []float64{100.0, 100.2, 100.4, 100.6, 100.8, 101.0, 101.2, 101.4}
	shown, median, hidden, err := timeline(times, 0)
	if err != nil {
		t.Fatal(err)
	}
	if hidden != 0 || median < 0.199 || median > 0.201 {
		t.Fatalf("median %.3f, hidden %.3f", median, hidden)
	}
	// 8 raw frames at 20/s = 0.4 s of VHS time = 10 GIF frames at 25/s.
	delays := slices.Repeat([]int{4}, 10)
	retime(delays, shown, median, 20)
	if got := total(delays); got < 1.59 || got > 1.61 {
		t.Fatalf("GIF length %.2f s, want 1.6 (8 frames 0.2 s apart): %v", got, delays)
	}
	for _, d := range delays {
		if d < minDelay {
			t.Fatalf("delay %d below %d: %v", d, minDelay, delays)
		}
	}

	if _, _, _, err := timeline([]float64{2, 1}, 0); err == nil {
		t.Fatal("times going backwards: no error")
	}
	if _, _, _, err := timeline([]float64{1, 2}, 1); err == nil {
		t.Fatal("a cut in 2 frames: no error")
	}
}

// TestRetimeCut: a Hide … Show gap is shown as one median interval, and
// the time it left out is reported.
func TestRetimeCut(t *testing.T) {
	shown, median, hidden, err := timeline([]float64{10.0, 10.2, 10.4, 25.4, 25.6, 25.8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if hidden < 14.79 || hidden > 14.81 {
		t.Fatalf("hidden %.3f s, want 14.8", hidden)
	}
	want := []float64{0, 0.2, 0.4, 0.6, 0.8, 1.0}
	for i := range want {
		if d := shown[i] - want[i]; d < -1e-9 || d > 1e-9 {
			t.Fatalf("shown %v, want %v (median %.3f)", shown, want, median)
		}
	}
}
