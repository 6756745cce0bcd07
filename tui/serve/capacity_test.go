package serve

import "testing"

// The rule as the docs state it: a 2-core 8 GB laptop serves 16 labs.
func TestMaxLabs(t *testing.T) {
	tests := []struct {
		cores, memMB, want int
	}{
		{2, 8192, 16},     // CPU bounds it
		{2, 0, 16},        // memory unknown
		{8, 32768, 64},    // CPU
		{16, 4096, 40},    // memory: (4096 - 1500) / 64
		{1, 1024, 1},      // never less than one
		{64, 262144, 512}, // CPU
	}
	for _, tc := range tests {
		if got := maxLabs(tc.cores, tc.memMB); got != tc.want {
			t.Errorf("maxLabs(%d cores, %d MB) = %d, want %d", tc.cores, tc.memMB, got, tc.want)
		}
	}
	if got, want := MaxLabsRule(), "min((memory - 1500 MB) / 64 MB, cores × 8)"; got != want {
		t.Errorf("MaxLabsRule() = %q, want %q", got, want)
	}
}
