package board

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func all() []string { return []string{Producer, Current, Usage, Query} }

func newBoard(inputs ...any) *Board {
	b := New(all(), Config{Brokers: "127.0.0.1:9092", Mongo: "mongodb://127.0.0.1:27017"})
	for _, in := range inputs {
		if bi, ok := in.(Input); !ok || !b.Apply(bi) {
			panic(fmt.Sprintf("not an input: %T", in))
		}
	}
	return b
}

func ev(name string, sec float64, e status.Event) ProcStatus {
	return ProcStatus{Name: name, At: at(sec), Event: e}
}

func lastEvent(b *Board) string {
	e := b.Events()
	if len(e) == 0 {
		return ""
	}
	return e[len(e)-1].Text
}

func countEvents(b *Board, substr string) int {
	n := 0
	for _, e := range b.Events() {
		if strings.Contains(e.Text, substr) {
			n++
		}
	}
	return n
}

func hasEvent(b *Board, proc, substr string) bool {
	for _, e := range b.Events() {
		if e.Proc == proc && strings.Contains(e.Text, substr) {
			return true
		}
	}
	return false
}

func TestNewOrdersCanonically(t *testing.T) {
	b := New([]string{Store, Query, Producer, "extra", Broker, Usage, Current, Query}, Config{})
	want := []string{Producer, Current, Usage, Query, Broker, Store, "extra"}
	if got := b.Names(); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if k := b.Process(Store).Key; k != 6 {
		t.Fatalf("store key = %d, want 6", k)
	}
	if _, ok := any("not an input").(Input); ok {
		t.Fatal("Apply accepted a string")
	}
}

func TestUsageLag(t *testing.T) {
	started := []any{ProcStarted{Name: Usage, PID: 10, At: at(0)}, ev(Usage, 0, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"})}
	tests := []struct {
		name    string
		inputs  []any
		want    int64
		unknown []int32
		known   bool
		noData  bool
		stale   bool
	}{
		{
			name:   "no samples yet",
			noData: true,
		},
		{
			name:   "watermarks but no commit sample",
			inputs: []any{Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 10}}},
			noData: true,
		},
		{
			name: "all partitions committed",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100, 1: 50, 2: 7}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 90, 1: 50, 2: 0}},
			},
			want: 17, known: true,
		},
		{
			name: "partitions without commit are unknown, not 0",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100, 1: 50, 2: 7}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 90, 1: -1}},
			},
			want: 10, unknown: []int32{1, 2},
		},
		{
			name: "never-committed group (kfake GROUP_ID_NOT_FOUND) is all unknown",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 3, 1: 4}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{}},
			},
			unknown: []int32{0, 1},
		},
		{
			name: "an empty partition without commit has nothing to read",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 5, 1: 0}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 5}},
			},
			want: 0, known: true,
		},
		{
			name: "stale watermark below the commit clamps at 0",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100, 1: 40}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 90, 1: 45}},
			},
			want: 10, known: true,
		},
		{
			name: "failed watermark poll keeps the numbers but marks them stale",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 60}},
				Offsets{At: at(2), Err: errors.New("broker down")},
			},
			want: 40, known: true, stale: true,
		},
		{
			// Read before `p`, they miss the producer's last batch: a 0
			// here armed a crash point that fired at once (Apache Kafka).
			name: "watermarks read before the producer paused give no lag",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 100}},
				ProcStarted{Name: Producer, PID: 11, At: at(0)},
				ev(Producer, 2, status.Event{Type: status.Paused}),
			},
			noData: true,
		},
		{
			name: "watermarks read after the producer paused count again",
			inputs: []any{
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 100}},
				ProcStarted{Name: Producer, PID: 11, At: at(0)},
				ev(Producer, 2, status.Event{Type: status.Paused}),
				Offsets{At: at(3), HighWatermarks: map[int32]int64{0: 110}},
			},
			want: 10, known: true,
		},
		{
			name: "a failing poll after the pause shows the old numbers stale",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100}},
				Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 90}},
				ProcStarted{Name: Producer, PID: 11, At: at(0)},
				ev(Producer, 2, status.Event{Type: status.Paused}),
				Offsets{At: at(3), Err: errors.New("broker down")},
			},
			want: 10, known: true, stale: true,
		},
		{
			name: "commits of another group do not count",
			inputs: []any{
				Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100}},
				Committed{At: at(1), Group: "demo-usage-old", Offsets: map[int32]int64{0: 100}},
			},
			noData: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBoard(append(slices.Clone(started), tc.inputs...)...)
			l := b.Process(Usage).Lag
			if !l.Applies || l.Messages != tc.want || !slices.Equal(l.Unknown, tc.unknown) ||
				l.Known() != tc.known || l.NoData != tc.noData || l.Stale != tc.stale {
				t.Fatalf("lag = %+v (known %v), want messages %d unknown %v known %v noData %v stale %v",
					l, l.Known(), tc.want, tc.unknown, tc.known, tc.noData, tc.stale)
			}
		})
	}
}

func TestUsageLagKeepsGrowingWhileDead(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 100, 1: 100}},
		Committed{At: at(1), Offsets: map[int32]int64{0: 100, 1: 100}},
		ProcExited{Name: Usage, PID: 10, At: at(2), Signal: "SIGKILL", ExitCode: -1},
	)
	var seen []int64
	for i := 1; i <= 3; i++ {
		// The dead consumer commits nothing; the producer keeps producing.
		b.Apply(Offsets{At: at(2 + float64(i)), HighWatermarks: map[int32]int64{0: 100 + int64(10*i), 1: 100 + int64(5*i)}})
		b.Apply(Committed{At: at(2 + float64(i)), Offsets: map[int32]int64{0: 100, 1: 100}})
		b.Apply(Tick{Now: at(2 + float64(i))})
		seen = append(seen, b.Process(Usage).Lag.Messages)
	}
	if want := []int64{15, 30, 45}; !slices.Equal(seen, want) {
		t.Fatalf("lag while dead = %v, want %v", seen, want)
	}
	// One sample per tick, with what was known at that moment.
	if h := b.Process(Usage).History; !slices.Equal(h, []int64{15, 30, 45}) {
		t.Fatalf("history = %v", h)
	}
}

func TestLagHistoryBounded(t *testing.T) {
	b := newBoard(ProcStarted{Name: Usage, PID: 1, At: at(0)}, Committed{At: at(0), Offsets: map[int32]int64{0: 0}})
	for i := range HistoryLen + 15 {
		b.Apply(Offsets{At: at(float64(i)), HighWatermarks: map[int32]int64{0: int64(i)}})
		b.Apply(Tick{Now: at(float64(i))})
		b.Apply(Tick{Now: at(float64(i) + 0.5)}) // within SampleEvery: no extra sample
	}
	h := b.Process(Usage).History
	if len(h) != HistoryLen || h[len(h)-1] != HistoryLen+14 || h[0] != 15 {
		t.Fatalf("history len %d first %d last %d", len(h), h[0], h[len(h)-1])
	}
}

func TestCurrentLag(t *testing.T) {
	progress := func(pos ...status.Position) ProcStatus {
		return ev(Current, 2, status.Event{Type: status.Progress, Positions: pos})
	}
	tests := []struct {
		name    string
		inputs  []any
		want    int64
		down    bool
		noData  bool
		unknown []int32
	}{
		{name: "never started is down", down: true},
		{name: "started, no position yet", inputs: []any{ProcStarted{Name: Current, PID: 5, At: at(1)}}, noData: true},
		{
			name: "own position against its own watermark",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: 40, HighWatermark: 100}, status.Position{Partition: 1, Offset: 100, HighWatermark: 100}),
			},
			want: 60,
		},
		{
			name: "a newer broker watermark raises the lag once it stopped reporting",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: 100, HighWatermark: 100}),
				Offsets{At: at(4), HighWatermarks: map[int32]int64{0: 130}},
			},
			want: 30,
		},
		{
			// Polled between two of its reports: the batch the watermark
			// adds was not offered to it yet; its own pair is one instant.
			name: "a watermark polled right after its report leaves its own pair",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: 100, HighWatermark: 100}),
				Offsets{At: at(2.4), HighWatermarks: map[int32]int64{0: 110}},
			},
			want: 0,
		},
		{
			name: "a watermark it does not know yet comes from the poll",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: 0, HighWatermark: -1}),
				Offsets{At: at(2.2), HighWatermarks: map[int32]int64{0: 50}},
			},
			want: 50,
		},
		{
			name: "invalid position before the first fetch counts from the start",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: -1001, HighWatermark: 20}),
			},
			want: 20,
		},
		{
			name: "a partition it reports nothing about is unknown",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: 10, HighWatermark: 10}),
				Offsets{At: at(3), HighWatermarks: map[int32]int64{0: 10, 1: 8}},
			},
			unknown: []int32{1},
		},
		{
			name: "crashed: no position, lag shown as down",
			inputs: []any{
				ProcStarted{Name: Current, PID: 5, At: at(1)},
				progress(status.Position{Partition: 0, Offset: 10, HighWatermark: 10}),
				ProcExited{Name: Current, PID: 5, At: at(3), Signal: "SIGKILL"},
			},
			down: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newBoard(tc.inputs...).Process(Current).Lag
			if l.Messages != tc.want || l.Down != tc.down || l.NoData != tc.noData || !slices.Equal(l.Unknown, tc.unknown) {
				t.Fatalf("lag = %+v, want %d down %v noData %v unknown %v", l, tc.want, tc.down, tc.noData, tc.unknown)
			}
		})
	}
	for _, name := range []string{Producer, Query} {
		if newBoard().Process(name).Lag.Applies {
			t.Fatalf("%s has Kafka lag", name)
		}
	}
}

func TestStateTransitions(t *testing.T) {
	start := ProcStarted{Name: Usage, PID: 10, At: at(0)}
	assigned := ev(Usage, 0.5, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	tests := []struct {
		name    string
		inputs  []any
		state   State
		label   string
		pid     int
		starts  int
		crashes int
		pending string
	}{
		{name: "before start", state: Starting, label: "starting"},
		{name: "spawned", inputs: []any{start}, state: Starting, label: "starting", pid: 10, starts: 1},
		{name: "assigned", inputs: []any{start, assigned}, state: Running, label: "running", pid: 10, starts: 1},
		{
			name:   "x pressed: crashing at once, before any exit",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpCrash}},
			state:  Crashing, label: "crashing…", pid: 10, starts: 1, pending: OpCrash,
		},
		{
			name: "crash confirmed by the exit",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpCrash},
				ProcExited{Name: Usage, PID: 10, At: at(1.1), Signal: "SIGKILL", ExitCode: -1}},
			state: Crashed, label: "crashed (SIGKILL)", starts: 1, crashes: 1,
		},
		{
			name:   "crash on its own with an exit code",
			inputs: []any{start, assigned, ProcExited{Name: Usage, PID: 10, At: at(3), ExitCode: 1}},
			state:  Crashed, label: "crashed (exit 1)", starts: 1, crashes: 1,
		},
		{
			name: "deliberate stop is not a crash",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpStop},
				ev(Usage, 1.1, status.Event{Type: status.Stopping, Reason: "SIGTERM"}),
				ProcExited{Name: Usage, PID: 10, At: at(1.5), Deliberate: true}},
			state: Stopped, label: "stopped", starts: 1,
		},
		{
			name: "restart: deliberate exit keeps restarting",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpRestart},
				ev(Usage, 1.1, status.Event{Type: status.Stopping}),
				ProcExited{Name: Usage, PID: 10, At: at(1.5), Deliberate: true}},
			state: Restarting, label: "restarting", starts: 1, pending: OpRestart,
		},
		{
			name: "restart completes with a new pid",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpRestart},
				ProcExited{Name: Usage, PID: 10, At: at(1.5), Deliberate: true},
				ProcStarted{Name: Usage, PID: 11, At: at(1.6)}},
			state: Starting, label: "starting", pid: 11, starts: 2,
		},
		{
			name: "start after a crash",
			inputs: []any{start, ProcExited{Name: Usage, PID: 10, At: at(1), Signal: "SIGKILL"},
				Request{At: at(2), Name: Usage, Op: OpStart}, ProcStarted{Name: Usage, PID: 12, At: at(2.1)}, assigned},
			state: Running, label: "running", pid: 12, starts: 2, crashes: 1,
		},
		{
			name: "failed request reverts",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpCrash},
				RequestDone{At: at(1.1), Name: Usage, Op: OpCrash, Err: errors.New("no such process")}},
			state: Running, label: "running", pid: 10, starts: 1,
		},
		{
			name: "a successful request answer changes nothing by itself",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpCrash},
				RequestDone{At: at(1.1), Name: Usage, Op: OpCrash}},
			state: Crashing, label: "crashing…", pid: 10, starts: 1, pending: OpCrash,
		},
		{
			name: "x then an exit the supervisor calls deliberate: still a crash",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpCrash},
				ProcExited{Name: Usage, PID: 10, At: at(1.1), Signal: "SIGKILL", Deliberate: true}},
			state: Crashed, label: "crashed (SIGKILL)", starts: 1, crashes: 1,
		},
		{
			name: "late exit of an earlier pid is ignored",
			inputs: []any{start, ProcExited{Name: Usage, PID: 10, At: at(1), Signal: "SIGKILL"},
				ProcStarted{Name: Usage, PID: 11, At: at(2)}, assigned,
				ProcExited{Name: Usage, PID: 10, At: at(3), Signal: "SIGKILL"}},
			state: Running, label: "running", pid: 11, starts: 2, crashes: 1,
		},
		{
			name:   "retrying a dependency",
			inputs: []any{start, ev(Usage, 1, status.Event{Type: status.Retrying, Endpoint: "kafka", Error: "refused"})},
			state:  Retrying, label: "retrying kafka", pid: 10, starts: 1,
		},
		{
			name: "connected after retrying",
			inputs: []any{start, ev(Usage, 1, status.Event{Type: status.Retrying, Endpoint: "kafka", Error: "refused"}),
				ev(Usage, 2, status.Event{Type: status.Connected, Endpoint: "kafka"})},
			state: Running, label: "running", pid: 10, starts: 1,
		},
		{
			name: "status events while crashing do not revive it",
			inputs: []any{start, assigned, Request{At: at(1), Name: Usage, Op: OpCrash},
				ev(Usage, 1.05, status.Event{Type: status.Progress, Processed: 5})},
			state: Crashing, label: "crashing…", pid: 10, starts: 1, pending: OpCrash,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBoard(tc.inputs...)
			p := b.Process(Usage)
			if p.State != tc.state || p.StateLabel != tc.label || p.PID != tc.pid || p.Starts != tc.starts ||
				p.Crashes != tc.crashes || p.Pending != tc.pending {
				t.Fatalf("got state %q label %q pid %d starts %d crashes %d pending %q\nwant %q %q %d %d %d %q",
					p.State, p.StateLabel, p.PID, p.Starts, p.Crashes, p.Pending,
					tc.state, tc.label, tc.pid, tc.starts, tc.crashes, tc.pending)
			}
		})
	}
}

func TestCrashTimelineLeavesStderrToTheLogView(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ProcLog{Name: Usage, At: at(0.1), Line: "from the first run"},
		ProcExited{Name: Usage, PID: 10, At: at(1), Deliberate: true},
		ProcStarted{Name: Usage, PID: 11, At: at(2)},
		ProcLog{Name: Usage, At: at(2.1), Line: "line 1"},
		ProcLog{Name: Usage, At: at(2.2), Line: "line 2"},
		ProcLog{Name: Usage, At: at(2.3), Line: "line 3"},
		ProcLog{Name: Usage, At: at(2.4), Line: "panic: boom"},
		ProcExited{Name: Usage, PID: 11, At: at(3), ExitCode: 2},
	)
	var texts []string
	for _, e := range b.Events() {
		texts = append(texts, e.Text)
	}
	joined := strings.Join(texts, "\n")
	if want := "crashed: exited with code 2 (pid 11); l shows its last log lines"; !strings.Contains(joined, want) {
		t.Fatalf("timeline lacks %q:\n%s", want, joined)
	}
	if strings.Contains(joined, "stderr") || strings.Contains(joined, "panic: boom") || strings.Contains(joined, "first run") {
		t.Fatalf("timeline carries raw stderr lines:\n%s", joined)
	}
	if got := b.Tail(Usage, 2); !slices.Equal(got, []string{"line 3", "panic: boom"}) {
		t.Fatalf("Tail = %v", got)
	}
}

func TestCrashPointAndArming(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 1, status.Event{Type: status.CrashPointArmed, Point: "after-delta", After: 1}),
	)
	if a := b.Process(Usage).Armed; a != "after-delta" {
		t.Fatalf("armed = %q", a)
	}
	if n := countEvents(b, "crash point after-delta armed"); n != 1 {
		t.Fatalf("%d arming events, want 1: %v", n, b.Events())
	}
	b.Apply(ev(Usage, 2, status.Event{Type: status.CrashPoint, Point: "after-delta", Partition: 1, Offset: 42}))
	b.Apply(ProcExited{Name: Usage, PID: 10, At: at(2.01), Signal: "SIGKILL"})
	p := b.Process(Usage)
	if p.Armed != "" || p.State != Crashed || p.Crashes != 1 {
		t.Fatalf("after crash point: %+v", p)
	}
	if !hasEvent(b, Usage, "crash point after-delta reached at partition 1 offset 42") {
		t.Fatalf("timeline: %v", b.Events())
	}
}

func TestReplayProgress(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Current, PID: 7, At: at(0)},
		ev(Current, 0.1, status.Event{Type: status.Assigned, Partitions: []int32{0, 1}}),
	)
	if p := b.Process(Current); p.State != Starting {
		t.Fatalf("before any progress: %s", p.StateLabel)
	}
	b.Apply(ev(Current, 0.5, status.Event{Type: status.Progress, Positions: []status.Position{
		{Partition: 0, Offset: 300, HighWatermark: 500},
		{Partition: 1, Offset: 100, HighWatermark: 500},
	}}))
	p := b.Process(Current)
	if p.State != Replaying || p.StateLabel != "replaying 40%" {
		t.Fatalf("state %s label %q", p.State, p.StateLabel)
	}
	done, total, frac := b.ReplayProgress()
	if done != 400 || total != 1000 || frac != 0.4 {
		t.Fatalf("progress %d/%d %.2f", done, total, frac)
	}
	// 999 of 1000 is not 100%.
	b.Apply(ev(Current, 0.8, status.Event{Type: status.Progress, Positions: []status.Position{
		{Partition: 0, Offset: 500, HighWatermark: 500}, {Partition: 1, Offset: 499, HighWatermark: 500},
	}}))
	if l := b.Process(Current).StateLabel; l != "replaying 99%" {
		t.Fatalf("label %q", l)
	}
	b.Apply(ev(Current, 1.4, status.Event{Type: status.CaughtUp, Processed: 1000, Millis: 1400}))
	if p := b.Process(Current); p.State != Running {
		t.Fatalf("after caught up: %s", p.StateLabel)
	}
	if !hasEvent(b, Current, "caught up after 1,000 messages in 1.4 s") {
		t.Fatalf("timeline: %v", b.Events())
	}
	// It showed replaying from its first progress with positions (0.5 s)
	// to caught up (1.4 s), not from its start.
	if d := b.Process(Current).Current.ReplayShown; d != 900*time.Millisecond {
		t.Fatalf("replay shown %s, want 900ms", d)
	}
	// A restart forgets the old progress.
	b.Apply(ProcExited{Name: Current, PID: 7, At: at(2), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Current, PID: 8, At: at(3)})
	if _, _, frac := b.ReplayProgress(); frac != 0 {
		t.Fatalf("progress after restart = %v", frac)
	}
	if d := b.Process(Current).Current.ReplayShown; d != 0 {
		t.Fatalf("replay shown after restart %s", d)
	}
	// Caught up before any progress with positions: never shown replaying.
	b.Apply(ev(Current, 3.1, status.Event{Type: status.CaughtUp, Processed: 10, Millis: 100}))
	if d := b.Process(Current).Current.ReplayShown; d != 0 {
		t.Fatalf("replay shown without progress %s", d)
	}
}

// ready is a usage line whose expectation the audit could compute.
func ready(id string, hours, km, expHours, expKm float64) UsageTotals {
	return UsageTotals{SensorID: id, HoursCents: cents(hours), KmCents: cents(km), Expect: ExpectReady, ExpectedHoursCents: cents(expHours), ExpectedKmCents: cents(expKm)}
}

func TestDriftClassification(t *testing.T) {
	tests := []struct {
		name     string
		rec      UsageTotals
		verdict  Verdict
		dh, dk   int64
		noWindow bool
	}{
		{name: "exact", rec: ready("s1", 1.5, 20, 1.5, 20), verdict: VerdictExact},
		{name: "float noise is exact to the cent", rec: ready("s1", 0.1+0.2, 0.3, 0.3, 0.1+0.2), verdict: VerdictExact},
		{name: "over-counted", rec: ready("s1", 3, 40.5, 1.5, 20.25), verdict: VerdictOver, dh: 150, dk: 2025},
		{name: "one counter over is over-counted", rec: ready("s1", 1.5, 20.01, 1.5, 20), verdict: VerdictOver, dk: 1},
		{name: "lost", rec: ready("s1", 1, 10, 1.5, 20), verdict: VerdictLost, dh: -50, dk: -1000},
		{name: "mixed", rec: ready("s1", 2, 10, 1.5, 20), verdict: VerdictMixed, dh: 50, dk: -1000},
		{name: "no window yet: no verdict", rec: UsageTotals{SensorID: "s1"}, verdict: VerdictNone, noWindow: true},
		{name: "audit behind the records: pending", rec: UsageTotals{SensorID: "s1", HoursCents: 200, Records: 3, Expect: ExpectPending}, verdict: VerdictPending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// One cut is enough: a verdict needs no second reading.
			b := newBoard(
				ProcStarted{Name: Usage, PID: 2, At: at(0)},
				ProcStarted{Name: Query, PID: 3, At: at(0)},
				TruthSnapshot{At: at(1), Sensors: []Truth{{SensorID: "s1"}}},
				UsageSnapshot{At: at(1), Sensors: []UsageTotals{tc.rec}},
			)
			u := b.Usage()
			if u.Status != Live || len(u.Rows) != 1 {
				t.Fatalf("usage view %+v", u)
			}
			r := u.Rows[0]
			if r.Verdict != tc.verdict || r.NoWindow != tc.noWindow {
				t.Fatalf("verdict %q noWindow %v, want %q %v", r.Verdict, r.NoWindow, tc.verdict, tc.noWindow)
			}
			if u.Total.Verdict != tc.verdict {
				t.Fatalf("total verdict %q, want %q", u.Total.Verdict, tc.verdict)
			}
			if tc.verdict == VerdictPending && (r.Drift != nil || r.Expected != nil) {
				t.Fatalf("pending with a drift %+v / expected %+v", r.Drift, r.Expected)
			}
			if r.Drift != nil && (r.Drift.HoursCents != tc.dh || r.Drift.KmCents != tc.dk) {
				t.Fatalf("drift %+v, want %d %d", *r.Drift, tc.dh, tc.dk)
			}
		})
	}
}

func TestUsageTotalsAndMissingSensors(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 2, At: at(0)},
		ProcStarted{Name: Query, PID: 3, At: at(0)},
		UsageSnapshot{At: at(1), Sensors: []UsageTotals{
			{SensorID: "a", HoursCents: 200, KmCents: 1000, Records: 4, Expect: ExpectReady, ExpectedHoursCents: 100, ExpectedKmCents: 1000},
			{SensorID: "b", HoursCents: 100, KmCents: 500, Records: 2, Expect: ExpectReady, ExpectedHoursCents: 150, ExpectedKmCents: 500},
			// checkpointed, nothing recorded, the audit says deltas were due: lost
			{SensorID: "c", Expect: ExpectReady, ExpectedHoursCents: 50, ExpectedKmCents: 100},
		}},
		TruthSnapshot{At: at(1), Sensors: []Truth{{SensorID: "a"}, {SensorID: "b"}, {SensorID: "c"}, {SensorID: "d"}}},
	)
	u := b.Usage()
	var ids []string
	for _, r := range u.Rows {
		ids = append(ids, string(r.Verdict))
	}
	if want := []string{"over-counted", "lost", "lost", ""}; !slices.Equal(ids, want) {
		t.Fatalf("verdicts %v, want %v", ids, want)
	}
	if d := u.Rows[3]; !d.NoWindow || d.Recorded == nil || d.Recorded.Records != 0 {
		t.Fatalf("sensor the audit knows, without checkpoint or records: %+v", d)
	}
	tot := u.Total
	if tot.Recorded.Hours() != 3 || tot.Recorded.Records != 6 || tot.Expected.Hours() != 3 || tot.Drift.HoursCents != 0 || tot.Drift.KmCents != -100 {
		t.Fatalf("total %+v %+v %+v", *tot.Recorded, *tot.Expected, *tot.Drift)
	}
	// The totals net out on hours, but one sensor over and others lost is not exact.
	if tot.Verdict != VerdictMixed {
		t.Fatalf("total verdict %q", tot.Verdict)
	}
}

// Each cut carries recorded and expected together, so the verdict is the
// one of the latest cut: exact at every poll in a steady state, whatever
// the audit snapshots arriving in between say, and off at once (and only)
// when a cut is off.
func TestUsageCutVerdicts(t *testing.T) {
	verdict := func(b *Board) Verdict { return b.Usage().Rows[0].Verdict }
	b := newBoard(ProcStarted{Name: Usage, PID: 2, At: at(0)}, ProcStarted{Name: Query, PID: 3, At: at(0)})
	for i := range 20 {
		sec := 1 + float64(i)*0.5
		// The totals grow between polls; expected grows with them, in the
		// same cut. Audit snapshots taken at other moments change nothing.
		h := float64(i) * 0.37
		b.Apply(UsageSnapshot{At: at(sec), Sensors: []UsageTotals{ready("a", h, 2*h, h, 2*h)}})
		b.Apply(TruthSnapshot{At: at(sec + 0.3), Sensors: []Truth{{SensorID: "a"}}})
		b.Apply(Tick{Now: at(sec + 0.4)})
		if v := verdict(b); v != VerdictExact {
			t.Fatalf("poll %d: %q", i, v)
		}
	}
	// The audit behind the records: pending, no drift, not lost.
	b.Apply(UsageSnapshot{At: at(12), Sensors: []UsageTotals{{SensorID: "a", HoursCents: 900, KmCents: 1800, Records: 20, Expect: ExpectPending}}})
	if r := b.Usage().Rows[0]; r.Verdict != VerdictPending || r.Drift != nil || r.NoWindow {
		t.Fatalf("audit behind: %+v", r)
	}
	// A duplicated delta shows in the first cut that holds it, and stays
	// while consumer-usage is down: its records cover the same window.
	b.Apply(UsageSnapshot{At: at(13), Sensors: []UsageTotals{ready("a", 9.5, 19, 9, 18)}})
	if v := verdict(b); v != VerdictOver {
		t.Fatalf("duplicate: %q", v)
	}
	b.Apply(ProcExited{Name: Usage, PID: 2, At: at(13.5), Signal: "SIGKILL"})
	b.Apply(UsageSnapshot{At: at(14), Sensors: []UsageTotals{ready("a", 9.5, 19, 9, 18)}})
	if v := verdict(b); v != VerdictOver {
		t.Fatalf("duplicate, consumer-usage down: %q", v)
	}
	// Checkpoints unreadable: no expectation, and the panel says why
	// rather than "no window".
	b.Apply(UsageSnapshot{At: at(15), Sensors: []UsageTotals{{SensorID: "a", HoursCents: 950}}, ExpectErr: errors.New("store unreachable")})
	u := b.Usage()
	if r := u.Rows[0]; r.Verdict != VerdictNone || r.NoWindow || r.Drift != nil {
		t.Fatalf("no expectation: %+v", r)
	}
	if u.Truth != Failing || !strings.Contains(u.TruthReason, "store unreachable") {
		t.Fatalf("truth %v %q", u.Truth, u.TruthReason)
	}
}

func TestUsagePanelDownAndRecovers(t *testing.T) {
	b := newBoard(
		Tick{Now: at(1)},
		ProcStarted{Name: Query, PID: 3, At: at(0)},
		UsageSnapshot{At: at(1), Sensors: []UsageTotals{{SensorID: "a", HoursCents: 100}}},
	)
	if u := b.Usage(); u.Status != Live || u.Rows[0].Recorded == nil {
		t.Fatalf("live: %+v", u)
	}
	b.Apply(ProcExited{Name: Query, PID: 3, At: at(2), Signal: "SIGKILL"})
	u := b.Usage()
	if u.Status != Down || !strings.Contains(u.Reason, "crashed (SIGKILL)") {
		t.Fatalf("down: %v %q", u.Status, u.Reason)
	}
	if len(u.Rows) != 0 {
		t.Fatalf("down panel still shows recorded usage: %+v", u.Rows)
	}
	b.Apply(ProcStarted{Name: Query, PID: 4, At: at(3)})
	if u := b.Usage(); u.Status != Waiting {
		t.Fatalf("restarted before answering: %v", u.Status)
	}
	b.Apply(UsageSnapshot{At: at(3.5), Err: errors.New("503: store unreachable")})
	if u := b.Usage(); u.Status != Failing || !strings.Contains(u.Reason, "store unreachable") {
		t.Fatalf("failing: %v %q", u.Status, u.Reason)
	}
	b.Apply(Tick{Now: at(4)})
	b.Apply(UsageSnapshot{At: at(4), Sensors: []UsageTotals{{SensorID: "a", HoursCents: 200}}})
	if u := b.Usage(); u.Status != Live || u.Rows[0].Recorded.Hours() != 2 {
		t.Fatalf("recovered: %+v", u)
	}
	b.Apply(Tick{Now: at(4).Add(StaleAfter + time.Second)})
	if u := b.Usage(); u.Status != Stale {
		t.Fatalf("old answer: %v", u.Status)
	}
}

func TestSensorsFreshness(t *testing.T) {
	snap := func(sec float64, caughtUp bool) SensorsSnapshot {
		return SensorsSnapshot{At: at(sec), CaughtUp: caughtUp, Sensors: []SensorState{
			{SensorID: "b", Timestamp: at(sec - 3).UnixMilli(), HoursTot: 10, KmTot: 100},
			{SensorID: "a", Timestamp: at(sec - 1).UnixMilli(), HoursTot: 5, KmTot: 50},
		}}
	}
	caughtUp := ev(Current, 1, status.Event{Type: status.CaughtUp, Processed: 10, Millis: 100})
	start := ProcStarted{Name: Current, PID: 7, At: at(0)}
	tests := []struct {
		name   string
		inputs []any
		status Freshness
		stale  bool
		reason string
	}{
		{name: "not started", status: Down, reason: "consumer-current is starting"},
		{name: "started, no answer", inputs: []any{start, Tick{Now: at(1)}}, status: Waiting},
		{name: "live", inputs: []any{start, caughtUp, snap(2, true), Tick{Now: at(2)}}, status: Live, reason: "live"},
		{
			name:   "replaying: partial rows are this run's, not stale",
			inputs: []any{start, ev(Current, 0.5, status.Event{Type: status.Progress, Positions: []status.Position{{Offset: 4, HighWatermark: 10}}}), snap(1, false), Tick{Now: at(1)}},
			status: Rebuilding, reason: "rebuilding",
		},
		{
			name:   "crashed: last values kept, marked stale",
			inputs: []any{start, caughtUp, snap(2, true), ProcExited{Name: Current, PID: 7, At: at(3), Signal: "SIGKILL"}, Tick{Now: at(3)}},
			status: Down, stale: true, reason: "consumer-current is crashed (SIGKILL)",
		},
		{
			name:   "crashing: stale at once",
			inputs: []any{start, caughtUp, snap(2, true), Request{At: at(2.5), Name: Current, Op: OpCrash}},
			status: Down, stale: true, reason: "crashing…",
		},
		{
			name: "restarted: the old run's values are stale until it answers",
			inputs: []any{start, caughtUp, snap(2, true), ProcExited{Name: Current, PID: 7, At: at(3), Signal: "SIGKILL"},
				ProcStarted{Name: Current, PID: 8, At: at(4)}, Tick{Now: at(4.5)}},
			status: Waiting, stale: true,
		},
		{
			name:   "poll failed",
			inputs: []any{start, caughtUp, snap(2, true), SensorsSnapshot{At: at(3), Err: errors.New("connection refused")}, Tick{Now: at(3)}},
			status: Failing, stale: true, reason: "GET /state failed: connection refused",
		},
		{
			name:   "too old",
			inputs: []any{start, caughtUp, snap(2, true), Tick{Now: at(2).Add(StaleAfter + time.Second)}},
			status: Stale, stale: true, reason: "no answer from consumer-current for 6s",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newBoard(tc.inputs...).Sensors()
			if v.Status != tc.status || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("status %v reason %q, want %v containing %q", v.Status, v.Reason, tc.status, tc.reason)
			}
			if v.StaleRows != (tc.stale && len(v.Rows) > 0) {
				t.Fatalf("StaleRows %v", v.StaleRows)
			}
			for _, r := range v.Rows {
				if r.Stale != tc.stale {
					t.Fatalf("row %s stale=%v, want %v", r.SensorID, r.Stale, tc.stale)
				}
			}
		})
	}
	b := newBoard(start, caughtUp, snap(2, true), Tick{Now: at(2)})
	rows := b.Sensors().Rows
	if rows[0].SensorID != "a" || rows[0].Age != time.Second || rows[1].Age != 3*time.Second {
		t.Fatalf("rows not sorted or ages wrong: %+v", rows)
	}
}

func TestSensorsAgainstTruth(t *testing.T) {
	cur := SensorState{SensorID: "a", Timestamp: 1000, HoursTot: 5, KmTot: 50, Partition: 1, Offset: 40}
	tests := []struct {
		truth SensorState
		want  TruthCheck
	}{
		{SensorState{SensorID: "a", Timestamp: 1000, HoursTot: 5, KmTot: 50, Partition: 1, Offset: 40}, TruthMatch},
		{SensorState{SensorID: "a", Timestamp: 2000, HoursTot: 6, KmTot: 55, Partition: 1, Offset: 43}, TruthBehind},
		{SensorState{SensorID: "a", Timestamp: 1000, HoursTot: 5, KmTot: 51, Partition: 1, Offset: 40}, TruthDiffers},
		// The audit's snapshot is a moment older than consumer-current's
		// state: ahead, not wrong (it read "WRONG" for every sensor while
		// the producer ran).
		{SensorState{SensorID: "a", Timestamp: 900, HoursTot: 4.9, KmTot: 49, Partition: 1, Offset: 37}, TruthAhead},
		// Same timestamp, another offset (a replayed copy): placed by offset.
		{SensorState{SensorID: "a", Timestamp: 1000, HoursTot: 5, KmTot: 50, Partition: 1, Offset: 45}, TruthBehind},
		// Another partition: placed by timestamp.
		{SensorState{SensorID: "a", Timestamp: 900, HoursTot: 4.9, KmTot: 49, Partition: 2, Offset: 90}, TruthAhead},
		{SensorState{SensorID: "a", Timestamp: 1100, HoursTot: 5.1, KmTot: 51, Partition: 2, Offset: 3}, TruthBehind},
	}
	for _, tc := range tests {
		b := newBoard(ProcStarted{Name: Current, PID: 1, At: at(0)},
			SensorsSnapshot{At: at(1), CaughtUp: true, Sensors: []SensorState{cur}},
			TruthSnapshot{At: at(1), Sensors: []Truth{{SensorID: "a", Last: &tc.truth}}})
		if got := b.Sensors().Rows[0].Truth; got != tc.want {
			t.Fatalf("truth %+v: got %q want %q", tc.truth, got, tc.want)
		}
	}
}

func TestCaughtUp(t *testing.T) {
	base := []any{
		ProcStarted{Name: Producer, PID: 9, At: at(0)},
		ProcStarted{Name: Current, PID: 1, At: at(0)},
		ev(Current, 1, status.Event{Type: status.CaughtUp, Processed: 10}),
		ProcStarted{Name: Usage, PID: 2, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, GroupID: "demo-usage"}),
	}
	tests := []struct {
		name   string
		inputs []any
		want   bool
	}{
		{name: "no samples", want: false},
		{
			name: "lag 0 with known commits",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10, 1: 5}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: 5}}},
			want: true,
		},
		{
			name: "a partition without commit",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10, 1: 5}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: -1}}},
			want: false,
		},
		{
			name: "behind",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 4}}},
			want: false,
		},
		{
			name: "producer running: commits passed an earlier watermark sample",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Offsets{At: at(3), HighWatermarks: map[int32]int64{0: 20}},
				Committed{At: at(3), Group: "demo-usage", Offsets: map[int32]int64{0: 12}}},
			want: true,
		},
		{
			name: "latest watermark poll failed",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				Offsets{At: at(3), Err: errors.New("down")}},
			want: false,
		},
		{
			name: "consumer-usage dead",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				ProcExited{Name: Usage, PID: 2, At: at(3), Signal: "SIGKILL"}},
			want: false,
		},
		{
			name: "producer paused: a watermark sample from before the pause is not enough",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				ev(Current, 2, status.Event{Type: status.Progress, Positions: []status.Position{{Partition: 0, Offset: 10}}}),
				ev(Producer, 3, status.Event{Type: status.Paused})},
			want: false,
		},
		{
			name: "producer paused: settled after the pause",
			inputs: []any{ev(Producer, 1.5, status.Event{Type: status.Paused}),
				Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				ev(Current, 2, status.Event{Type: status.Progress, Positions: []status.Position{{Partition: 0, Offset: 10}}})},
			want: true,
		},
		{
			name: "producer paused: consumer-current still behind",
			inputs: []any{ev(Producer, 1.5, status.Event{Type: status.Paused}),
				Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				ev(Current, 2, status.Event{Type: status.Progress, Positions: []status.Position{{Partition: 0, Offset: 7}}})},
			want: false,
		},
		{
			name: "pause asked, not yet confirmed: the producer is still flushing",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10, 1: 5}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: 5}},
				Request{At: at(2.5), Name: Producer, Op: OpPause}},
			want: false,
		},
		{
			name: "a pause asked of a paused producer waits for nothing",
			inputs: []any{ev(Producer, 1.5, status.Event{Type: status.Paused}),
				Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				ev(Current, 2, status.Event{Type: status.Progress, Positions: []status.Position{{Partition: 0, Offset: 10}}}),
				Request{At: at(2.5), Name: Producer, Op: OpPause}},
			want: true,
		},
		{
			name: "consumer-current restarted and not caught up again",
			inputs: []any{Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
				Committed{At: at(2), Group: "demo-usage", Offsets: map[int32]int64{0: 10}},
				ProcExited{Name: Current, PID: 1, At: at(3), Signal: "SIGKILL"},
				ProcStarted{Name: Current, PID: 3, At: at(4)}},
			want: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := newBoard(append(slices.Clone(base), tc.inputs...)...).CaughtUp(); got != tc.want {
				t.Fatalf("CaughtUp = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTimelineBoundedAndSince(t *testing.T) {
	b := newBoard()
	for i := range TimelineLen + 50 {
		b.Apply(Action{At: at(float64(i)), Text: fmt.Sprintf("action %d", i)})
	}
	evs := b.Events()
	if len(evs) != TimelineLen || evs[0].Text != "action 50" {
		t.Fatalf("len %d first %q", len(evs), evs[0].Text)
	}
	last := evs[len(evs)-1].Seq
	if got := b.EventsSince(last); len(got) != 0 {
		t.Fatalf("since last: %v", got)
	}
	b.Apply(Action{At: at(999), Text: "new"})
	if got := b.EventsSince(last); len(got) != 1 || got[0].Text != "new" || got[0].String() != "10:16:39 new" {
		t.Fatalf("since: %v", got)
	}
}

func TestInvalidMessagesFold(t *testing.T) {
	b := newBoard(ProcStarted{Name: Current, PID: 1, At: at(0)})
	for i := range 5 {
		b.Apply(ev(Current, float64(i), status.Event{Type: status.InvalidMessage, Partition: 2, Offset: int64(i), Error: "bad"}))
	}
	if got := lastEvent(b); got != "5 invalid messages skipped (last: partition 2 offset 4: bad)" {
		t.Fatalf("last event %q", got)
	}
}

func TestBrokerAddressesFromListening(t *testing.T) {
	b := New([]string{Producer, Broker, Store}, Config{RunDir: "/tmp/run"})
	b.Apply(ProcStarted{Name: Broker, PID: 2, At: at(0)})
	b.Apply(ev(Broker, 0.2, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:40001"}))
	b.Apply(ProcStarted{Name: Store, PID: 3, At: at(0)})
	b.Apply(ev(Store, 0.2, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:40002"}))
	c := b.Config()
	if c.Brokers != "127.0.0.1:40001" || c.Mongo != "mongodb://127.0.0.1:40002" {
		t.Fatalf("config %+v", c)
	}
	if b.Process(Broker).State != Running || b.Process(Store).State != Running {
		t.Fatal("embedded roles not running after listening")
	}
}

func TestProducerPauseAndModes(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Producer, PID: 1, At: at(0)},
		ev(Producer, 1, status.Event{Type: status.Progress, Produced: 120, Sensors: 10}),
		ev(Producer, 2, status.Event{Type: status.Paused}),
	)
	p := b.Process(Producer)
	if p.Producer.Produced != 120 || !p.Producer.Paused || p.StateLabel != "running (paused)" {
		t.Fatalf("producer %+v", p)
	}
	u := b.Process(Usage)
	if u.Usage.Mode != "naive" || u.Usage.Reset != "latest" || u.Strategy != "checkpoint + latest" {
		t.Fatalf("usage defaults %q %q %q", u.Usage.Mode, u.Usage.Reset, u.Strategy)
	}
	b.Apply(Mode{UsageMode: "guarded", UsageReset: "earliest"})
	if u := b.Process(Usage); u.Usage.Mode != "guarded" || u.Strategy != "checkpoint + earliest" {
		t.Fatalf("after Mode: %q %q", u.Usage.Mode, u.Strategy)
	}
}

func TestReportJSON(t *testing.T) {
	last := SensorState{SensorID: "s1", Timestamp: 1000, HoursTot: 10, KmTot: 100, Lat: 45, Lon: 9}
	b := newBoard(
		Tick{Now: at(2)},
		ProcStarted{Name: Current, PID: 7, At: at(0)},
		ev(Current, 0.5, status.Event{Type: status.CaughtUp}),
		SensorsSnapshot{At: at(2), CaughtUp: true, Sensors: []SensorState{last}},
		ProcStarted{Name: Usage, PID: 8, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, Mode: "guarded", Reset: "earliest", GroupID: "g"}),
		Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 10}},
		Committed{At: at(2), Group: "g", Offsets: map[int32]int64{0: 7}},
		ProcStarted{Name: Query, PID: 9, At: at(0)},
		UsageSnapshot{At: at(2), Sensors: []UsageTotals{{SensorID: "s1", HoursCents: 125, KmCents: 300, Records: 2,
			Partition: 1, Offset: 41, Expect: ExpectReady, ExpectedHoursCents: 100, ExpectedKmCents: 300,
			Causes: []Cause{{Kind: CauseCountedAgain, Partition: 1, Offset: 41, Records: 2, Writer: "consumer-usage@2026-01-02T10:00:00Z",
				RecordedHoursCents: 50, RecordedKmCents: 0, ExpectedHoursCents: 25}}}}},
		TruthSnapshot{At: at(2), Sensors: []Truth{
			{SensorID: "s1", Last: &last},
			{SensorID: "s2", Last: &SensorState{SensorID: "s2", Timestamp: 5}},
		}},
		ProcExited{Name: Producer, PID: 0, At: at(1), Signal: "SIGKILL"},
	)
	raw, err := json.Marshal(b.Report())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	procs := got["processes"].([]any)
	byName := map[string]map[string]any{}
	for _, p := range procs {
		m := p.(map[string]any)
		byName[m["name"].(string)] = m
	}
	if u := byName[Usage]; u["lag"] != 3.0 || u["mode"] != "guarded" || u["reset"] != "earliest" || u["state"] != "starting" {
		t.Fatalf("usage process %v", u)
	}
	if c := byName[Current]; c["lag"] != nil || c["state"] != "running" || c["pid"] != 7.0 {
		t.Fatalf("current process %v (no position reported: lag null)", c)
	}
	if p := byName[Producer]; p["lag"] != nil || p["state"] != "crashed" || p["last_exit"] != "SIGKILL" || p["crashes"] != 1.0 {
		t.Fatalf("producer %v", p)
	}
	if _, ok := byName[Query]["mode"]; ok {
		t.Fatal("mode on consumer-query")
	}
	sensors := got["sensors"].([]any)
	if len(sensors) != 2 {
		t.Fatalf("sensors %v", sensors)
	}
	s1 := sensors[0].(map[string]any)
	wantS1 := `{"current":{"hours_tot":10,"km_tot":100,"lat":45,"lon":9,"timestamp":1000},"drift":{"hours":0.25,"km":0},"drift_causes":[{"expected_hours":0.25,"expected_km":0,"kind":"counted-again","offset":41,"partition":1,"recorded_hours":0.5,"recorded_km":0,"records":2,"writer":"consumer-usage@2026-01-02T10:00:00Z"}],"sensor_id":"s1","truth":{"hours_tot":10,"km_tot":100,"timestamp":1000,"usage_hours":1,"usage_km":3},"usage":{"hours":1.25,"km":3,"records":2,"through":{"offset":41,"partition":1}},"verdict":"over-counted"}`
	if s, _ := json.Marshal(s1); string(s) != wantS1 {
		t.Fatalf("s1 = %s\nwant %s", s, wantS1)
	}
	if k, _ := json.Marshal(got["drift_causes_by_kind"]); string(k) != `{"counted-again":{"drift_hours":0.25,"drift_km":0,"messages":1}}` {
		t.Fatalf("drift_causes_by_kind = %s", k)
	}
	s2 := sensors[1].(map[string]any)
	if s2["current"] != nil || s2["drift"] != nil || s2["truth"] == nil {
		t.Fatalf("s2 = %v", s2)
	}
	// Usage 0 recorded for s2 (query answered without it), no window: no drift.
	if u := s2["usage"].(map[string]any); u["records"] != 0.0 {
		t.Fatalf("s2 usage = %v", u)
	}
	for _, k := range []string{"brokers", "mongo"} {
		if got[k] == "" || got[k] == nil {
			t.Fatalf("%s missing", k)
		}
	}
}

// TestKeylessCrashNamesTheLogFile: where no key works (headless output, a
// report) a crash points at the run's log file, not at l.
func TestKeylessCrashNamesTheLogFile(t *testing.T) {
	b := New(all(), Config{RunDir: "/tmp/krl-run-1"})
	b.SetKeyless()
	for _, in := range []Input{
		ProcStarted{Name: Usage, PID: 11, At: at(0)},
		ProcLog{Name: Usage, At: at(0.4), Line: "panic: boom"},
		ProcExited{Name: Usage, PID: 11, At: at(1), ExitCode: 2},
	} {
		b.Apply(in)
	}
	want := "crashed: exited with code 2 (pid 11); its last log lines are in /tmp/krl-run-1/logs/consumer-usage.log"
	if got := b.Events()[len(b.Events())-1].Text; got != want {
		t.Fatalf("crash event %q, want %q", got, want)
	}
}
