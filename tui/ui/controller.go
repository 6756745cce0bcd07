package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// Controller is everything the dashboard can ask of the supervisor. The
// model never calls it from Update: every call runs inside a tea.Cmd (off
// the Update goroutine) and comes back as an ActionResultMsg or a
// LogTailMsg. Calls may block for as long as the action takes (a stop
// waits for the exit), so implementations need no goroutines of their own.
type Controller interface {
	// Crash sends SIGKILL to the process group of the named process.
	Crash(name string) error
	// Stop stops it gracefully (SIGTERM, SIGKILL after a timeout).
	Stop(name string) error
	// Start starts a process that is not running.
	Start(name string) error
	// Restart stops (if running) and starts it again.
	Restart(name string) error
	// ToggleFreeze SIGSTOPs the named process's group, or SIGCONTs it when
	// it is frozen; frozen tells which it did.
	ToggleFreeze(name string) (frozen bool, err error)
	// TogglePause pauses a publishing producer or resumes a paused one
	// (SIGUSR1/SIGUSR2); paused tells which it asked for.
	TogglePause() (paused bool, err error)
	// ArmCrash arms the named process's crash point (none disarms it:
	// consumer-usage's POST /crash-at).
	ArmCrash(name, point string) error
	// ToggleUsageMode switches consumer-usage between naive and guarded
	// from its next start, restarting it only if it runs.
	ToggleUsageMode() (mode string, restarted bool, err error)
	// ToggleUsageReset switches consumer-usage between latest and earliest
	// (a fresh group) likewise.
	ToggleUsageReset() (reset string, restarted bool, err error)
	// ResetLab starts a new baseline: usage records and checkpoints cleared,
	// consumer-usage reading on from the end of the topic.
	ResetLab() error
	// InjectBad makes the running producer publish n malformed records,
	// every kind in turn (its POST /inject-bad; 0 = one of each kind), and
	// returns how many were delivered.
	InjectBad(n int) (delivered int, err error)
	// CycleRebuild moves consumer-current's rebuild strategy one step along
	// replay → snapshot → changelog → replay, from its next start (a
	// running one prepares it at once), and returns it.
	CycleRebuild() (string, error)
	// Scale runs n (1–3) instances of consumer-usage in its group; the
	// ones scaled away are stopped and their rows removed.
	Scale(n int) error
	// ToggleAcks switches the producer between acks=all and acks=1 (a
	// running producer flushes and switches at once) and returns the
	// setting asked for.
	ToggleAcks() (string, error)
	// Tail returns up to n of the latest stderr lines of the named process.
	Tail(name string, n int) []string
	// AddPartitions grows the topic to total partitions (above its count:
	// a topic cannot shrink).
	AddPartitions(total int) error
}

// Operations an ActionResultMsg reports besides board.OpCrash, OpStop,
// OpStart and OpRestart, each with the Controller call it answers and
// what its Value is.
const (
	OpPause     = "pause"      // TogglePause: "pause" or "resume"
	OpFreeze    = "freeze"     // ToggleFreeze: "frozen" or "thawed"
	OpArm       = "arm"        // ArmCrash: the point armed
	OpMode      = "mode"       // ToggleUsageMode: the mode
	OpReset     = "reset"      // ToggleUsageReset: the reset
	OpResetLab  = "reset-lab"  // ResetLab
	OpInjectBad = "inject-bad" // InjectBad: how many were delivered
	OpScale     = "scale"      // Scale: the number of instances asked for
	OpScenario  = "scenario"   // ScenarioHost.Start: the name; Stop: ""
	OpRebuild   = "rebuild"    // CycleRebuild: the strategy
	OpAcks      = "acks"       // ToggleAcks: the setting asked for
)

// OpAddPartitions is AddPartitions's answer: Name is the topic, Value the
// new partition count.
const OpAddPartitions = "add-partitions"

// ScenarioHost runs guided scenarios for the dashboard (the g key). Start
// and Stop are called from tea.Cmds, never from Update; the running
// scenario's narration (scenario.Progress) arrives among the lab's Inputs.
type ScenarioHost interface {
	// Catalog lists the scenarios (static data: read once).
	Catalog() []scenario.Scenario
	// Start stops the running scenario, if any, and starts name in the
	// background.
	Start(name string) error
	// Stop ends the running scenario and waits for its cleanup.
	Stop()
}

// ActionResultMsg is the answer of one Controller call.
type ActionResultMsg struct {
	Op    string // board.OpCrash, ... or one of the Op constants above
	Name  string // process acted on
	Value string // what the Op constant says
	// Restarted: OpMode/OpReset restarted a running consumer-usage.
	Restarted bool
	Err       error
}

// LogTailMsg carries the lines Controller.Tail returned.
type LogTailMsg struct {
	Name  string
	Lines []string
}

func call(op, name, value string, f func() error) tea.Cmd {
	return func() tea.Msg {
		return ActionResultMsg{Op: op, Name: name, Value: value, Err: f()}
	}
}

func tail(ctl Controller, name string, n int) tea.Cmd {
	return func() tea.Msg {
		lines := ctl.Tail(name, n)
		for i, l := range lines {
			lines[i] = board.Shown(strings.ReplaceAll(l, "\t", "    "))
		}
		return LogTailMsg{Name: name, Lines: lines}
	}
}
