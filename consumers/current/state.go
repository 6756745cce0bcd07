package current

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/api"

	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// partition is what the consumer knows of one assigned partition.
type partition struct {
	next int64 // next offset to process
	// target is the high watermark seen at assignment (-1 until known):
	// reaching it on every partition means the replay is complete.
	target int64
	hwm    int64 // newest high watermark known
}

// state is the in-memory dictionary of the seed (state[key] = message),
// plus the counters the dashboard shows. The Kafka loop writes it, the
// HTTP handlers read it.
type state struct {
	mu        sync.Mutex
	groupID   string
	caughtUp  bool
	processed int64
	invalid   int64
	parts     map[int32]*partition
	// all is parts as a slice, for the caught-up check (a map iteration
	// per message showed in pprof when it ran after every message).
	all     []*partition
	sensors map[string]api.SensorState
	// done is, per partition, the offset after the last record applied by
	// this process. It outlives revocations: a reassignment after a broker
	// outage resumes there instead of replaying from earliest into a state
	// that already holds those records.
	done map[int32]int64
	// health is fed by the Kafka loop and answers GET /healthz.
	health *health.Tracker
	// valid is the product's one validation rule with what it needs to
	// remember, per partition (see validator).
	valid map[int32]*telemetry.Validator
	// floors: after a restore from the changelog, a sensor's records below
	// its floor in a partition are already in its restored state (it was
	// published after the mark the reading starts from): they are read,
	// not judged again (rebuild.go). Set before any record is read and
	// never changed after, so readers look at it without the lock.
	floors map[floorKey]int64
	// refs is, per sensor and partition, the last valid message applied:
	// the validators' references as of done, which a cut saves (the
	// validators themselves run ahead, on the readers, by what they have
	// judged and not yet applied).
	refs map[floorKey]telemetry.Reference
}

// floorKey is a sensor in a partition.
type floorKey struct {
	sensor    string
	partition int32
}

func newState(groupID string) *state {
	return &state{groupID: groupID, parts: map[int32]*partition{}, sensors: map[string]api.SensorState{},
		done: map[int32]int64{}, valid: map[int32]*telemetry.Validator{}, refs: map[floorKey]telemetry.Reference{},
		health: health.NewTracker(0)}
}

// judged is one record as a reader judged it, waiting to be applied.
type judged struct {
	partition int32
	offset    int64
	verdict   telemetry.Verdict
	msg       telemetry.Message // when Valid
	err       error             // when Invalid: why
	key       []byte            // when Invalid, for its log line
	// floored: below its sensor's floor (see state.floors): read, counted,
	// not judged nor applied.
	floored bool
}

// judge decodes and judges one record (telemetry's one rule) against v, the
// validator of its partition: on the reader that polled it, outside the
// state's lock, so readers of different partitions judge in parallel.
func (s *state) judge(v *telemetry.Validator, p int32, offset int64, key, value []byte) judged {
	if len(s.floors) > 0 && offset < s.floors[floorKey{string(key), p}] {
		return judged{partition: p, offset: offset, floored: true}
	}
	m, verdict, err := v.Judge(p, offset, key, value)
	j := judged{partition: p, offset: offset, verdict: verdict, msg: m, err: err}
	if verdict == telemetry.Invalid {
		j.key = key
	}
	return j
}

// validator is partition p's validator. It lives as long as the process,
// not an assignment, so a record delivered again is recognised as a
// replay and neither counted as invalid nor applied over newer state.
func (s *state) validator(p int32) *telemetry.Validator {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.valid[p]
	if v == nil {
		v = telemetry.NewValidator()
		s.valid[p] = v
	}
	return v
}

// applyBatch applies judged records in order, under one lock: a valid
// message overwrites its sensor's state; an invalid one is counted, never
// stored; a replay of an offset already applied is skipped. The caught-up
// check runs whenever a partition reaches its target, so caughtUp comes
// with processed as it was at that very record.
func (s *state) applyBatch(b []judged) (caughtUp bool, processed int64, targets map[int32]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range b {
		r := &b[i]
		if d, ok := s.done[r.partition]; (ok && r.offset < d) || r.verdict == telemetry.Replay {
			// Already applied by this process (a fetch from before a
			// reassignment): neither new nor invalid.
			r.verdict = telemetry.Replay
			continue
		}
		s.done[r.partition] = r.offset + 1
		s.processed++
		if ps := s.parts[r.partition]; ps != nil && r.offset+1 > ps.next {
			reached := ps.next < ps.target && r.offset+1 >= ps.target
			ps.next = r.offset + 1
			ps.hwm = max(ps.hwm, ps.next)
			if reached && s.caughtUpLocked() {
				caughtUp, processed, targets = true, s.processed, s.targetsLocked()
			}
		}
		if r.floored {
			continue
		}
		if r.verdict == telemetry.Invalid {
			s.invalid++
			continue
		}
		s.sensors[r.msg.SensorID] = api.SensorStateOf(r.msg, r.partition, r.offset)
		s.refs[floorKey{r.msg.SensorID, r.partition}] = telemetry.Reference{Partition: r.partition, Message: r.msg, Offset: r.offset}
	}
	return caughtUp, processed, targets
}

// assign starts tracking partitions; start and target are per partition
// (target -1 = not known yet).
func (s *state) assign(start, target map[int32]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts = map[int32]*partition{}
	for p, off := range start {
		s.parts[p] = &partition{next: off, target: target[p], hwm: max(off, target[p])}
	}
	s.all = slices.Collect(maps.Values(s.parts))
}

// resumeAt is where this process stopped reading partition p, if it read it.
func (s *state) resumeAt(p int32) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off, ok := s.done[p]
	return off, ok
}

func (s *state) revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts = map[int32]*partition{}
	s.all = nil
}

// unknownTargets lists assigned partitions whose target is not known.
func (s *state) unknownTargets() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int32
	for p, ps := range s.parts {
		if ps.target < 0 {
			out = append(out, p)
		}
	}
	return out
}

func (s *state) setTarget(p int32, low, high int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.parts[p]; ps != nil && ps.target < 0 {
		ps.target = high
		ps.next = max(ps.next, low)
		ps.hwm = max(ps.hwm, high)
	}
}

func (s *state) seenHighWatermark(p int32, high int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.parts[p]; ps != nil {
		ps.hwm = max(ps.hwm, high)
	}
}

// checkCaughtUp marks the state caught up, once, when every assigned
// partition reached its target (an empty partition has reached it from the
// start). It reports true only the first time, with the targets.
func (s *state) checkCaughtUp() (first bool, processed int64, targets map[int32]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.caughtUpLocked() {
		return false, s.processed, nil
	}
	return true, s.processed, s.targetsLocked()
}

func (s *state) targetsLocked() map[int32]int64 {
	targets := make(map[int32]int64, len(s.parts))
	for p, ps := range s.parts {
		targets[p] = ps.target
	}
	return targets
}

func (s *state) caughtUpLocked() (first bool) {
	if s.caughtUp || len(s.parts) == 0 {
		return false
	}
	for _, ps := range s.all {
		if ps.target < 0 || ps.next < ps.target {
			return false
		}
	}
	s.caughtUp = true
	return true
}

func (s *state) isCaughtUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caughtUp
}

func (s *state) view() api.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := api.State{
		GroupID: s.groupID, CaughtUp: s.caughtUp, Processed: s.processed, Invalid: s.invalid,
		Positions: s.positionsLocked(), Sensors: make([]api.SensorState, 0, len(s.sensors)),
	}
	for _, st := range s.sensors {
		v.Sensors = append(v.Sensors, st)
	}
	sort.Slice(v.Sensors, func(i, j int) bool { return v.Sensors[i].SensorID < v.Sensors[j].SensorID })
	return v
}

func (s *state) progress() status.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return status.Event{Type: status.Progress, Positions: s.positionsLocked(),
		Processed: s.processed, Invalid: s.invalid, Sensors: len(s.sensors)}
}

func (s *state) positionsLocked() []status.Position {
	out := make([]status.Position, 0, len(s.parts))
	for p, ps := range s.parts {
		out = append(out, status.Position{Partition: p, Offset: ps.next, HighWatermark: ps.hwm})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

func (s *state) handler() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.view())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body := healthz{GroupID: s.groupID, ReplayDone: s.caughtUp}
		s.mu.Unlock()
		body.Report = s.health.Report(time.Now())
		writeJSON(w, body.HTTPStatus(), body)
	})
	return mux
}

// healthz is the GET /healthz answer: the progress report (503 when stuck,
// see package health), the group, and whether the replay from earliest is
// done.
type healthz struct {
	health.Report
	GroupID    string `json:"group_id"`
	ReplayDone bool   `json:"replay_done"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// cut is the whole state as of one moment: what a snapshot or a changelog
// publication saves.
type cut struct {
	sensors []api.SensorState // by sensor id
	refs    []telemetry.Reference
	// through is, per partition, the offset after the last record the
	// state covers.
	through map[int32]int64
}

func (s *state) cut() cut {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := cut{sensors: make([]api.SensorState, 0, len(s.sensors)), through: maps.Clone(s.done),
		refs: make([]telemetry.Reference, 0, len(s.refs))}
	for _, ref := range s.refs {
		c.refs = append(c.refs, ref)
	}
	sort.Slice(c.refs, func(i, j int) bool {
		a, b := c.refs[i], c.refs[j]
		return a.Message.SensorID < b.Message.SensorID || (a.Message.SensorID == b.Message.SensorID && a.Partition < b.Partition)
	})
	for _, st := range s.sensors {
		c.sensors = append(c.sensors, st)
	}
	sort.Slice(c.sensors, func(i, j int) bool { return c.sensors[i].SensorID < c.sensors[j].SensorID })
	return c
}

// restored is a state to start from instead of an empty one: a cut, and
// the floors a changelog's values above its mark need.
type restored struct {
	cut
	floors map[floorKey]int64
}

// restore makes r the state, before any record is read: the records
// below r.through are in it, and the validator judges what follows as the
// one that read them did.
func (s *state) restore(r restored) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sensors = make(map[string]api.SensorState, len(r.sensors))
	for _, st := range r.sensors {
		s.sensors[st.SensorID] = st
	}
	s.done = maps.Clone(r.through)
	if s.done == nil {
		s.done = map[int32]int64{}
	}
	refs := map[int32][]telemetry.Reference{}
	s.refs = map[floorKey]telemetry.Reference{}
	for _, ref := range r.refs {
		refs[ref.Partition] = append(refs[ref.Partition], ref)
		s.refs[floorKey{ref.Message.SensorID, ref.Partition}] = ref
	}
	s.valid = map[int32]*telemetry.Validator{}
	for p, through := range s.done {
		s.valid[p] = telemetry.RestoreValidator(map[int32]int64{p: through}, refs[p])
	}
	for p, rs := range refs {
		if s.valid[p] == nil { // references of a partition with nothing judged
			s.valid[p] = telemetry.RestoreValidator(nil, rs)
		}
	}
	s.floors = r.floors
}
