package usage

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// healthz is the GET /healthz answer: the progress report (503 when
// stuck, see package health) and what this consumer runs with.
type healthz struct {
	health.Report
	Mode    lesson.Mode  `json:"mode"`
	Reset   lesson.Reset `json:"reset"`
	GroupID string       `json:"group_id"`
	Stats   Stats        `json:"stats"`
	CrashAt *Armed       `json:"crash_at"` // null when nothing is armed
}

// newHandler serves GET /healthz and POST /crash-at?point=P&after=N
// (point=none disarms).
//
// An armed point can kill this process at the next message, so arming is
// ordered: the request is validated, the arm is announced on the status
// stream, the whole reply is written and flushed, and only then does the
// point take effect. A client therefore always has its answer (and the
// status reader its CrashPointArmed) before the crash it asked for.
func newHandler(mode lesson.Mode, reset lesson.Reset, group string, stats func() Stats, tracker *health.Tracker, arm *CrashArm,
	delay *EffectDelay, em *status.Emitter, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	// POST /effect-delay?delay=8s holds every usage write from now on.
	mux.HandleFunc("POST /effect-delay", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("delay"))
		if err != nil || d < 0 || d > MaxEffectDelay {
			writeJSON(w, http.StatusBadRequest, map[string]string{
				"error": fmt.Sprintf("delay %q: want a duration between 0 and %s", r.URL.Query().Get("delay"), MaxEffectDelay)})
			return
		}
		delay.Set(d)
		log.Warn("effect delay set over HTTP", "delay", d)
		em.Emit(status.Event{Type: status.EffectDelay, Millis: d.Milliseconds()})
		writeJSON(w, http.StatusOK, map[string]string{"effect_delay": d.String()})
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		h := healthz{Report: tracker.Report(time.Now()), Mode: mode, Reset: reset, GroupID: group, Stats: stats()}
		if a, ok := arm.State(); ok {
			h.CrashAt = &a
		}
		writeJSON(w, h.HTTPStatus(), h)
	})
	mux.HandleFunc("POST /crash-at", func(w http.ResponseWriter, r *http.Request) {
		point, err := lesson.ParseCrashPoint(r.URL.Query().Get("point"))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		after := 1
		if s := r.URL.Query().Get("after"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "after: " + err.Error()})
				return
			}
			after = n
		}
		if point == lesson.NoCrashPoint {
			arm.Disarm()
			log.Warn("crash point disarmed over HTTP")
			em.Emit(status.Event{Type: status.CrashPointArmed, Point: string(lesson.NoCrashPoint)})
			writeJSON(w, http.StatusOK, map[string]*Armed{"armed": nil})
			return
		}
		if err := ValidateArm(point, after); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		log.Warn("crash point armed over HTTP", "point", point, "after", after)
		em.Emit(status.Event{Type: status.CrashPointArmed, Point: string(point), After: after})
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusOK, map[string]Armed{"armed": {Point: point, After: after}})
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		_ = arm.Arm(point, after) // validated above
	})
	return mux
}

// writeJSON writes a complete reply (its length known up front), so a
// flushed reply is whole on the wire even if the process dies right after.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
