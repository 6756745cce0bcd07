package ui

import "fmt"

// The largest screen any seat may ask for (an SSH pty or window change,
// a browser, the local terminal): the view pads every line to the width,
// so an unbounded size is unbounded memory. A larger window is drawn at
// this size, and its status line says so.
const (
	MaxWidth  = 500
	MaxHeight = 200
)

// boundSize is the size the model draws at for a window of w×h, and the
// note that says so when it is not the window's own ("" when it is).
func boundSize(w, h int) (int, int, string) {
	bw, bh := min(w, MaxWidth), min(h, MaxHeight)
	if bw == w && bh == h {
		return w, h, ""
	}
	return bw, bh, fmt.Sprintf("window %dx%d is larger than %dx%d: drawn at %dx%d", w, h, MaxWidth, MaxHeight, bw, bh)
}
