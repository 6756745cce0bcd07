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
	// all is parts as a slice, for the caught-up check after every
	// message of a replay (a map iteration per message showed in pprof).
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
	// remember: each sensor's last valid message per partition, and how
	// far each partition was judged. It lives as long as the process, not
	// an assignment, so a record delivered again is recognised as a replay
	// and neither counted as invalid nor applied over newer state.
	valid *telemetry.Validator
	// floors: after a restore from the changelog, a sensor's records below
	// its floor in a partition are already in its restored state (it was
	// published after the mark the reading starts from): they are read,
	// not judged again (rebuild.go).
	floors map[floorKey]int64
}

// floorKey is a sensor in a partition.
type floorKey struct {
	sensor    string
	partition int32
}

func newState(groupID string) *state {
	return &state{groupID: groupID, parts: map[int32]*partition{}, sensors: map[string]api.SensorState{},
		done: map[int32]int64{}, valid: telemetry.NewValidator(), health: health.NewTracker(0)}
}

// apply processes one record: a valid message overwrites its sensor's
// state; an invalid one (telemetry.Check) is counted and returned as an
// error, never stored; a replay of an offset already applied is skipped.
func (s *state) apply(p int32, offset int64, key, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.done[p]; ok && offset < d {
		// Already applied by this process (a fetch from before a
		// reassignment): neither new nor invalid.
		return nil
	}
	s.done[p] = offset + 1
	s.processed++
	if ps := s.parts[p]; ps != nil && offset+1 > ps.next {
		ps.next = offset + 1
		ps.hwm = max(ps.hwm, ps.next)
	}
	if len(s.floors) > 0 && offset < s.floors[floorKey{string(key), p}] {
		return nil
	}
	m, verdict, err := s.valid.Judge(p, offset, key, value)
	switch verdict {
	case telemetry.Replay:
		return nil
	case telemetry.Invalid:
		s.invalid++
		return err
	}
	s.sensors[m.SensorID] = api.SensorStateOf(m, p, offset)
	return nil
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
	if s.caughtUp || len(s.parts) == 0 {
		return false, s.processed, nil
	}
	for _, ps := range s.all {
		if ps.target < 0 || ps.next < ps.target {
			return false, s.processed, nil
		}
	}
	s.caughtUp = true
	targets = make(map[int32]int64, len(s.parts))
	for p, ps := range s.parts {
		targets[p] = ps.target
	}
	return true, s.processed, targets
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
	c := cut{sensors: make([]api.SensorState, 0, len(s.sensors)), refs: s.valid.References(), through: maps.Clone(s.done)}
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
	s.valid = telemetry.RestoreValidator(s.done, r.refs)
	s.floors = r.floors
}
