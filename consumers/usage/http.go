package usage

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// health is the GET /healthz answer.
type health struct {
	Status  string             `json:"status"`
	Mode    kafkacfg.UsageMode `json:"mode"`
	Reset   string             `json:"reset"`
	GroupID string             `json:"group_id"`
	Stats   Stats              `json:"stats"`
	CrashAt *Armed             `json:"crash_at"` // null when nothing is armed
}

// newHandler serves GET /healthz and POST /crash-at?point=P&after=N.
func newHandler(mode kafkacfg.UsageMode, reset, group string, stats func() Stats, arm *CrashArm, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		h := health{Status: "ok", Mode: mode, Reset: reset, GroupID: group, Stats: stats()}
		if a, ok := arm.State(); ok {
			h.CrashAt = &a
		}
		writeJSON(w, http.StatusOK, h)
	})
	mux.HandleFunc("POST /crash-at", func(w http.ResponseWriter, r *http.Request) {
		point := r.URL.Query().Get("point")
		after := 1
		if s := r.URL.Query().Get("after"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "after: " + err.Error()})
				return
			}
			after = n
		}
		if err := arm.Arm(point, after); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		log.Warn("crash point armed over HTTP", "point", point, "after", after)
		a, _ := arm.State()
		writeJSON(w, http.StatusOK, map[string]Armed{"armed": a})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
