package board

import "fmt"

func (b *Board) request(v Request) {
	p := b.procs[v.Name]
	if p == nil {
		return
	}
	if v.Op == OpPause || v.Op == OpResume {
		// A pause of a paused producer (or a resume of a publishing one) is
		// nothing it will confirm: no change is pending.
		if f := p.producer; f != nil && (f.pauseAsked != "" || f.paused != (v.Op == OpPause)) {
			f.pauseAsked = v.Op
		}
		b.event(v.At, v.Name, LevelAction, v.Op+" requested")
		return
	}
	if v.Op == OpFreeze || v.Op == OpThaw {
		b.event(v.At, v.Name, LevelAction, freezeText(v.Op))
		return
	}
	if v.Op == OpInjectBad {
		b.event(v.At, v.Name, LevelAction, "malformed records requested (every kind in turn)")
		return
	}
	if v.Op == OpHistory {
		b.event(v.At, v.Name, LevelAction, "a burst of history requested")
		return
	}
	if p.pending == "" {
		p.prevState = p.state
	}
	p.pending = v.Op
	p.pendingAt = v.At
	if r, ok := lifecycleRequests[v.Op]; ok {
		p.state = r.state
		b.event(v.At, v.Name, LevelAction, r.words)
	}
}

// lifecycleRequests is what each lifecycle request shows while it is
// under way, and the timeline's words for it.
var lifecycleRequests = map[string]struct {
	state State
	words string
}{
	OpCrash:   {Crashing, "crash requested (SIGKILL to its process group)"},
	OpStop:    {Stopping, "stop requested (SIGTERM)"},
	OpRestart: {Restarting, "restart requested"},
	OpStart:   {Starting, "start requested"},
}

func (b *Board) requestDone(v RequestDone) {
	p := b.procs[v.Name]
	if p == nil || v.Err == nil {
		return
	}
	if f := p.producer; f != nil && (v.Op == OpPause || v.Op == OpResume) {
		f.pauseAsked = ""
	}
	b.event(v.At, v.Name, LevelBad, fmt.Sprintf("%s failed: %v", v.Op, v.Err))
	// Only the lifecycle operations were pending (request): a failed one
	// reverts its state.
	if p.pending == v.Op {
		p.pending = ""
		p.state = p.prevState
	}
}
