package ui

import (
	"math"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// A window larger than MaxWidth×MaxHeight (a hostile pty, a browser on
// a wall) is drawn at the bound, and the screen says so; a window within
// it is drawn as it is, without a note.
func TestWindowSizeIsBounded(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{2000, 1000}, {65535, 65535}, {math.MaxInt32, 40}, {600, 30}, {MaxWidth, MaxHeight}, {120, 36}} {
		view := render(t, sceneRunning(), sz.w, sz.h)
		lines := strings.Split(view, "\n")
		wantW, wantH := min(sz.w, MaxWidth), min(sz.h, MaxHeight)
		if len(lines) != wantH {
			t.Errorf("%dx%d: %d lines, want %d", sz.w, sz.h, len(lines), wantH)
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > wantW {
				t.Errorf("%dx%d: line %d is %d wide, want at most %d", sz.w, sz.h, i, w, wantW)
				break
			}
		}
		_, _, note := boundSize(sz.w, sz.h)
		oversized := sz.w > MaxWidth || sz.h > MaxHeight
		if oversized != (note != "") || (oversized && !strings.Contains(view, note)) {
			t.Errorf("%dx%d: the screen does not say %q", sz.w, sz.h, note)
		}
	}
	if _, _, note := boundSize(65535, 65535); note != "window 65535x65535 is larger than 500x200: drawn at 500x200" {
		t.Errorf("note %q", note)
	}
	// Too small in one direction, too large in the other.
	m, _ := tea.Model(New(sceneRunning().b, &fakeController{}, Options{})).Update(tea.WindowSizeMsg{Width: 65535, Height: 10})
	if v := m.View(); !strings.Contains(v, "too small") || !strings.Contains(v, "drawn at 500x10") {
		t.Errorf("65535x10: %q", v)
	}
}
