package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

const presenterBanner = "presenter's lab · read-only"

// readOnlyModel is a watch-only model over the scene at w×h.
func readOnlyModel(s *scene, ctl Controller, opts Options, w, h int) tea.Model {
	opts.ReadOnly = true
	m, _ := New(s.b, ctl, opts).Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// statusOf is the view's status line (the line above the footer, which is
// one line unless the full help is open).
func statusOf(view string) string {
	lines := strings.Split(view, "\n")
	return lines[len(lines)-2]
}

func TestReadOnlyRefusesEveryActionKey(t *testing.T) {
	msgs := map[string]tea.KeyMsg{}
	for _, k := range []string{"x", "s", "r", "R", "g", "p", "1", "3", "tab", "down", "up", "l", "z", "m", "e", "c", "b", "+", "-", "[", "]"} {
		msgs[k] = keyMsg(k)
	}
	msgs[`"xr" typed together`] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("xr")}
	msgs[`"3x" typed together`] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3x")}
	msgs[`"q" pasted`] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q"), Paste: true}
	msgs[`"x?" pasted`] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x?"), Paste: true}
	msgs["enter"] = tea.KeyMsg{Type: tea.KeyEnter}
	for name, msg := range msgs {
		t.Run(name, func(t *testing.T) {
			ctl, host := &fakeController{}, &fakeScenarios{}
			m := readOnlyModel(sceneRunning(), ctl, Options{Scenarios: host}, 120, 36)
			before := m.(Model).Selected()
			m, cmd := m.Update(msg)
			if cmd != nil {
				// Whatever it is, it must call nothing (and must not quit).
				m = drain(m, cmd)
				if _, ok := cmd().(tea.QuitMsg); ok {
					t.Fatal("quit")
				}
			}
			// The picker would take enter next: it must not be open.
			m = drain(m.Update(tea.KeyMsg{Type: tea.KeyEnter}))
			got := m.(Model)
			if calls := ctl.Calls(); len(calls) != 0 {
				t.Fatalf("controller calls %q", calls)
			}
			if calls := host.Calls(); len(calls) != 0 {
				t.Fatalf("scenario host calls %q", calls)
			}
			if got.Selected() != before {
				t.Fatalf("selection moved from %q to %q", before, got.Selected())
			}
			if got.overlay.is(pickerPanel) || got.overlay.is(logsPanel) || got.overlay.help || got.narration != nil {
				t.Fatalf("an overlay opened: picking %v logs %v help %v narration %v", got.overlay.is(pickerPanel), got.overlay.is(logsPanel), got.overlay.help, got.narration != nil)
			}
			if got.status != DefaultReadOnlyNote || got.statusLevel != board.LevelWarn {
				t.Fatalf("status %q at level %v", got.status, got.statusLevel)
			}
			v := got.View()
			checkFrame(t, v, 120, 36)
			if line := statusOf(v); !strings.Contains(line, "! "+DefaultReadOnlyNote) {
				t.Fatalf("status line %q does not say the note", line)
			}
		})
	}
}

func TestReadOnlyHelpCloseAndQuit(t *testing.T) {
	ctl := &fakeController{}
	m := readOnlyModel(sceneRunning(), ctl, Options{}, 120, 36)
	m = press(t, m, "?")
	// The help lists the keys that work here, not the presenter's.
	if v := m.View(); !m.(Model).overlay.help || !strings.Contains(v, "quit") || strings.Contains(v, "crash (SIGKILL)") {
		t.Fatalf("? did not open the read-only help:\n%s", v)
	}
	m = press(t, m, "esc")
	if m.(Model).overlay.help {
		t.Fatal("esc did not close the help")
	}
	// Typed together, the allowed keys still act and the others do not.
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x?")})
	m = drain(m, cmd)
	if !m.(Model).overlay.help {
		t.Fatal(`"x?" did not open the help`)
	}
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not quit", k)
		}
	}
	if calls := ctl.Calls(); len(calls) != 0 {
		t.Fatalf("controller calls %q", calls)
	}
}

func TestReadOnlyNote(t *testing.T) {
	// Before any key the status line already says it is read-only.
	m := readOnlyModel(sceneRunning(), &fakeController{}, Options{}, 120, 36)
	if line := statusOf(m.View()); !strings.Contains(line, "! "+DefaultReadOnlyNote) {
		t.Fatalf("status line %q", line)
	}
	const note = "watching lab 3f2a9c01: only ? and q work"
	m = readOnlyModel(sceneRunning(), &fakeController{}, Options{ReadOnlyNote: note}, 80, 24)
	m = press(t, m, "x")
	if line := statusOf(m.View()); !strings.Contains(line, "! "+note) {
		t.Fatalf("status line %q", line)
	}
	// A writable model is not concerned.
	m = newModel(sceneRunning(), &fakeController{})
	if line := statusOf(m.View()); strings.Contains(line, "read-only") {
		t.Fatalf("status line %q", line)
	}
}

func TestReadOnlyIgnoresTheMouse(t *testing.T) {
	ctl := &fakeController{}
	m := readOnlyModel(sceneRunning(), ctl, Options{}, 120, 36)
	before := m.View()
	m, cmd := m.Update(tea.MouseMsg{X: 10, Y: 5, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
	if cmd != nil || len(ctl.Calls()) != 0 || m.View() != before {
		t.Fatal("a mouse message did something")
	}
}

func TestReadOnlyGolden(t *testing.T) {
	t.Run("read_only_120x36", func(t *testing.T) {
		m := readOnlyModel(sceneRunning(), &fakeController{}, Options{Banner: presenterBanner}, 120, 36)
		m = press(t, m, "x")
		out := m.View()
		checkFrame(t, out, 120, 36)
		golden.RequireEqual(t, []byte(out))
	})
}

// TestBannerNeverWraps: the header stays one line at every width; the
// banner takes the run directory's room, then the product name's, and is
// cut last.
func TestBannerNeverWraps(t *testing.T) {
	long := strings.Repeat("a very long banner ", 12)
	for _, banner := range []string{presenterBanner, "lab 3f2a9c01", long, "two\nlines\x1b[31m red\tand a tab"} {
		for w := MinWidth; w <= 210; w++ {
			for _, sc := range []func() *scene{sceneRunning, sceneStartup, sceneClusterBrokerCrashed} {
				m := readOnlyModel(sc(), &fakeController{}, Options{Banner: banner}, w, MinHeight)
				out := m.View()
				checkFrame(t, out, w, MinHeight)
				if t.Failed() {
					t.Fatalf("banner %q at %d wide:\n%s", banner, w, out)
				}
			}
		}
	}
	header := func(banner string, w int) string {
		m := readOnlyModel(sceneRunning(), &fakeController{}, Options{Banner: banner}, w, 36)
		return strings.Split(m.View(), "\n")[0]
	}
	if h := header(presenterBanner, 120); !strings.HasPrefix(h, "Kafka Recovery Lab │ presenter's lab · read-only │ brokers ") || !strings.HasSuffix(h, "10:01:04") {
		t.Fatalf("120 wide: %q", h)
	}
	if h := header(presenterBanner, 160); !strings.Contains(h, "read-only │ brokers ") || !strings.Contains(h, "│ run /tmp/krl/") {
		t.Fatalf("160 wide, with room for the run directory: %q", h)
	}
	// At 80 the product name gives way, then the banner is cut; the clock stays.
	if h := header(presenterBanner, 80); !strings.HasPrefix(h, "presenter's lab · re… │ brokers ") || !strings.HasSuffix(h, "10:01:04") {
		t.Fatalf("80 wide: %q", h)
	}
	if h := header("lab 3f2a9c01", 80); !strings.HasPrefix(h, "lab 3f2a9c01 │ brokers") {
		t.Fatalf("80 wide, short banner: %q", h)
	}
	if h := header(long, 120); !strings.Contains(h, "…") || !strings.HasSuffix(h, "10:01:04") {
		t.Fatalf("120 wide, long banner: %q", h)
	}
	if h := header("two\nlines\x1b[31m red", 120); !strings.Contains(h, "│ two lines red │") {
		t.Fatalf("banner not made one plain line: %q", h)
	}
}

// TestRendererGovernsColour: with Options.Renderer every escape the view
// prints comes from that renderer's colour profile, whatever lipgloss's
// default renderer (here the opposite) says.
func TestRendererGovernsColour(t *testing.T) {
	renderer := func(p termenv.Profile, dark bool) *lipgloss.Renderer {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(p)
		r.SetHasDarkBackground(dark)
		return r
	}
	type view struct {
		name  string
		scene func() *scene
		opts  Options
		msgs  []tea.Msg
	}
	views := []view{
		{name: "running", scene: sceneRunning, msgs: []tea.Msg{keyMsg("3")}},
		{name: "replaying", scene: sceneReplaying, msgs: []tea.Msg{keyMsg("2")}},
		{name: "drift", scene: sceneDrift, msgs: []tea.Msg{keyMsg("3")}},
		{name: "help", scene: sceneRunning, msgs: []tea.Msg{keyMsg("?")}},
		{name: "logs", scene: sceneUsageCrashed, msgs: []tea.Msg{keyMsg("3"), keyMsg("l")}},
		{name: "picker", scene: sceneRunning, opts: Options{Scenarios: &fakeScenarios{}}, msgs: []tea.Msg{keyMsg("g")}},
		{name: "narration", scene: sceneRunning, opts: Options{Scenarios: &fakeScenarios{}}, msgs: []tea.Msg{progressPress()}},
		{name: "failover", scene: sceneFailover, msgs: []tea.Msg{keyMsg("1")}},
		{name: "read_only", scene: sceneRunning, opts: Options{ReadOnly: true, Banner: presenterBanner}, msgs: []tea.Msg{keyMsg("x")}},
	}
	renderAll := func(t *testing.T, r *lipgloss.Renderer, check func(name, out string)) {
		t.Helper()
		for _, v := range views {
			for _, sz := range []struct{ w, h int }{{120, 36}, {80, 24}, {60, 15}} {
				opts := v.opts
				opts.Renderer = r
				m := tea.Model(New(v.scene().b, &fakeController{}, opts))
				m, _ = m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
				for _, msg := range v.msgs {
					m, _ = m.Update(msg)
				}
				out := m.View()
				checkFrame(t, out, sz.w, sz.h)
				check(fmt.Sprintf("%s %dx%d", v.name, sz.w, sz.h), out)
			}
		}
	}

	// Colour by default, none in the session: nothing may leak through
	// lipgloss's default renderer.
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	renderAll(t, renderer(termenv.Ascii, true), func(name, out string) {
		if i := strings.Index(out, "\x1b"); i >= 0 {
			t.Errorf("%s: an escape with an Ascii renderer: %q", name, out[max(0, i-40):min(len(out), i+40)])
		}
	})

	// No colour by default, TrueColor in the session: the session's colours.
	lipgloss.SetColorProfile(termenv.Ascii)
	dark := map[string]string{}
	renderAll(t, renderer(termenv.TrueColor, true), func(name, out string) {
		if !strings.Contains(out, "\x1b[") {
			t.Errorf("%s: no colour with a TrueColor renderer", name)
		}
		dark[name] = out
	})
	// And the session's background picks the adaptive colours.
	renderAll(t, renderer(termenv.TrueColor, false), func(name, out string) {
		if out == dark[name] {
			t.Errorf("%s: the same colours on a light background as on a dark one", name)
		}
	})
}
