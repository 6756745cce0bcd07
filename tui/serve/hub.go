package serve

import (
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// Hub is one lab's dashboard shared by the sessions showing it (its
// attendee, reconnecting; the room watching the presenter). It owns the
// lab's board and one ui.Model per viewer, and runs every Update on its
// own goroutine: the board takes each input once, and only that goroutine
// reads it, so a late viewer sees the whole run so far (the board was fed
// from the lab's first input on) without replaying anything. A viewer's
// Cmds run in its session's tea.Program, never on the hub's goroutine.
type Hub struct {
	board *board.Board
	msgs  chan any
	done  chan struct{}
	once  sync.Once

	// The hub goroutine's own.
	viewers map[int]*viewer
	nextID  int
}

// viewer is one session's dashboard on the hub.
type viewer struct {
	id    int
	model tea.Model
	last  string
	// frames holds the latest rendered screen not yet handed to the
	// session's program (older ones are dropped: only the latest matters).
	frames chan string
	// cmds are the model's Cmds not yet handed to the session's program,
	// which runs them; ready says there are some.
	cmdsMu sync.Mutex
	cmds   []tea.Cmd
	ready  chan struct{}
	gone   chan struct{} // closed when the viewer detached
}

type (
	hubInputs ui.Inputs
	toViewer  struct {
		id  int
		msg tea.Msg
	}
	attachMsg struct {
		build func(*board.Board) tea.Model
		reply chan *viewer
	}
	detachMsg  struct{ id int }
	inspectMsg struct{ fn func(*board.Board) }
)

// NewHub starts a hub on board b, fed from inputs (a lab's Inputs) until
// that channel closes.
func NewHub(b *board.Board, inputs <-chan board.Input) *Hub {
	h := &Hub{board: b, msgs: make(chan any, 64), done: make(chan struct{}), viewers: map[int]*viewer{}}
	go h.run()
	go func() {
		ui.Forward(inputs, func(m tea.Msg) { h.send(hubInputs(m.(ui.Inputs))) }, ui.Frame)
	}()
	return h
}

// Close stops the hub; its viewers' sessions see their last screen.
func (h *Hub) Close() { h.once.Do(func() { close(h.done) }) }

func (h *Hub) send(m any) bool {
	select {
	case h.msgs <- m:
		return true
	case <-h.done:
		return false
	}
}

// Inspect runs fn on the board on the hub's goroutine and waits for it.
func (h *Hub) Inspect(fn func(*board.Board)) {
	ran := make(chan struct{})
	if h.send(inspectMsg{func(b *board.Board) { fn(b); close(ran) }}) {
		select {
		case <-ran:
		case <-h.done:
		}
	}
}

func (h *Hub) run() {
	for {
		select {
		case <-h.done:
			return
		case m := <-h.msgs:
			h.handle(m)
		}
	}
}

func (h *Hub) handle(m any) {
	switch m := m.(type) {
	case hubInputs:
		for _, in := range m {
			h.board.Apply(in)
		}
		for _, v := range h.viewers {
			h.update(v, ui.BoardChanged{Inputs: ui.Inputs(m)})
		}
	case toViewer:
		if v := h.viewers[m.id]; v != nil {
			h.update(v, m.msg)
		}
	case attachMsg:
		h.nextID++
		v := &viewer{id: h.nextID, model: m.build(h.board), frames: make(chan string, 1),
			ready: make(chan struct{}, 1), gone: make(chan struct{})}
		h.viewers[v.id] = v
		h.render(v)
		m.reply <- v
	case detachMsg:
		if v := h.viewers[m.id]; v != nil {
			delete(h.viewers, m.id)
			close(v.gone)
		}
	case inspectMsg:
		m.fn(h.board)
	}
}

// update is the viewer's Update. Its Cmd goes to the session's program,
// which runs it as bubbletea runs any Cmd (a batch, a sequence, a quit
// that ends the session, not the lab) and sends the messages back here.
func (h *Hub) update(v *viewer, msg tea.Msg) {
	next, cmd := v.model.Update(msg)
	v.model = next
	if cmd != nil {
		v.cmdsMu.Lock()
		v.cmds = append(v.cmds, cmd)
		v.cmdsMu.Unlock()
		select {
		case v.ready <- struct{}{}:
		default:
		}
	}
	h.render(v)
}

func (h *Hub) render(v *viewer) {
	s := v.model.View()
	if s == v.last {
		return
	}
	v.last = s
	select {
	case <-v.frames: // drop the unsent older frame
	default:
	}
	v.frames <- s
}

// Attach adds a viewer whose model build makes (on the hub's goroutine,
// from the board) and returns the session's window on it. The session's
// program runs Window.Model and Pump; it ends when the viewer's model
// quits.
func (h *Hub) Attach(build func(*board.Board) tea.Model) (*Window, bool) {
	reply := make(chan *viewer, 1)
	if !h.send(attachMsg{build: build, reply: reply}) {
		return nil, false
	}
	select {
	case v := <-reply:
		w := &Window{hub: h, v: v}
		w.input.touch()
		return w, true
	case <-h.done:
		return nil, false
	}
}

// Window is a session's view of a hub viewer.
type Window struct {
	hub   *Hub
	v     *viewer
	input lastInput
}

// Detach removes the viewer; idempotent.
func (w *Window) Detach() { w.hub.send(detachMsg{w.v.id}) }

// Pump hands the viewer's frames and Cmds to send (the session's
// tea.Program's Send) until the viewer is detached or the hub stops.
func (w *Window) Pump(send func(tea.Msg)) {
	for {
		select {
		case s := <-w.v.frames:
			send(frameMsg(s))
		case <-w.v.ready:
			w.v.cmdsMu.Lock()
			cmds := w.v.cmds
			w.v.cmds = nil
			w.v.cmdsMu.Unlock()
			for _, c := range cmds {
				send(cmdMsg{c})
			}
		case <-w.v.gone:
			return
		case <-w.hub.done:
			return
		}
	}
}

// Model is the session's tea.Model.
func (w *Window) Model() tea.Model { return windowModel{w: w} }

type (
	frameMsg string
	// cmdMsg carries a Cmd of the viewer's model to the session's program.
	cmdMsg struct{ cmd tea.Cmd }
)

// windowModel is what runs in the session's tea.Program: it draws the
// hub's latest frame, returns the viewer's Cmds for the program to run,
// and forwards everything else (the terminal's keys and sizes, the Cmds'
// messages) to the viewer's model on the hub.
type windowModel struct {
	w    *Window
	view string
}

func (m windowModel) Init() tea.Cmd { return nil }

func (m windowModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case frameMsg:
		m.view = string(msg)
	case cmdMsg:
		return m, msg.cmd
	default:
		if isInput(msg) {
			m.w.input.touch()
		}
		m.w.hub.send(toViewer{m.w.v.id, msg})
	}
	return m, nil
}

func (m windowModel) View() string { return m.view }
