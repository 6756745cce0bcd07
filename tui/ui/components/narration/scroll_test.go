package narration

import "testing"

// TestScrollWindow: the window always holds the cursor, never on a line
// that stands for entries scrolled off, and fills the room it has.
func TestScrollWindow(t *testing.T) {
	for n := 1; n <= 20; n++ {
		for room := 3; room <= 8; room++ {
			for cursor := 0; cursor < n; cursor++ {
				first, last := scrollWindow(n, cursor, room)
				if cursor < first || cursor >= last {
					t.Fatalf("n %d room %d cursor %d: window [%d, %d) without the cursor", n, room, cursor, first, last)
				}
				if last-first != min(n, room) || first < 0 || last > n {
					t.Fatalf("n %d room %d cursor %d: window [%d, %d)", n, room, cursor, first, last)
				}
				if (first > 0 && cursor == first) || (last < n && cursor == last-1) {
					t.Fatalf("n %d room %d cursor %d: window [%d, %d) puts the cursor on a \"more\" line", n, room, cursor, first, last)
				}
			}
		}
	}
}
