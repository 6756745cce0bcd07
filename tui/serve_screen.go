package main

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/tui/serve"
)

// tableModel is the serve process's own screen: the table of labs.
type tableModel struct {
	srv           *serve.Server
	connect       string
	rows          []serve.LabRow
	head          serve.TableHead
	width, height int
	openPresenter bool
}

type labsMsg struct {
	rows []serve.LabRow
	head serve.TableHead
}

func newTableModel(srv *serve.Server, connect string) tableModel {
	return tableModel{srv: srv, connect: connect, head: srv.Head()}
}

// readLabs asks the server for the table (it waits on every lab's hub, so
// it runs as a Cmd).
func (m tableModel) readLabs(after time.Duration) tea.Cmd {
	srv := m.srv
	return tea.Tick(after, func(time.Time) tea.Msg { return labsMsg{srv.Labs(), srv.Head()} })
}

func (m tableModel) Init() tea.Cmd { return m.readLabs(0) }

func (m tableModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case labsMsg:
		m.rows, m.head = msg.rows, msg.head
		return m, m.readLabs(time.Second)
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		case "p", "enter":
			m.openPresenter = true
			return m, tea.Quit
		}
	}
	return m, nil
}

var (
	titleStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("14"))
	mutedStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("7"))
)

func (m tableModel) View() string {
	var b strings.Builder
	b.WriteString(titleStyle.Render("Kafka Recovery Lab · workshop server") + "\n\n")
	b.WriteString(m.connect + "\n")
	b.WriteString(serve.FormatTable(m.rows, m.head))
	b.WriteString("\n" + mutedStyle.Render("p: the presenter's dashboard (q there comes back) · q: stop the server and every lab") + "\n")
	out := b.String()
	if m.width > 0 {
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if lipgloss.Width(l) > m.width {
				lines[i] = ansi.Truncate(l, m.width, "")
			}
		}
		if m.height > 0 && len(lines) > m.height {
			lines = lines[:m.height]
		}
		out = strings.Join(lines, "\n")
	}
	return out
}
