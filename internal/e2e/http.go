package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// The HTTP bodies as the contract in the briefing defines them, declared
// here rather than imported so that a consumer drifting from the contract
// fails these tests.

// StateBody is consumer-current's GET /state.
type StateBody struct {
	GroupID   string            `json:"group_id"`
	CaughtUp  bool              `json:"caught_up"`
	Processed int64             `json:"processed"`
	Invalid   int64             `json:"invalid"`
	Positions []status.Position `json:"positions"`
	Sensors   []StateSensor     `json:"sensors"`
}

// StateSensor is one line of StateBody.Sensors.
type StateSensor struct {
	SensorID  string             `json:"sensor_id"`
	Timestamp int64              `json:"timestamp"`
	Odometry  telemetry.Odometry `json:"odometry"`
	Position  telemetry.Position `json:"position"`
	Partition int32              `json:"partition"`
	Offset    int64              `json:"offset"`
}

// UsageBody is consumer-query's GET /usage.
type UsageBody struct {
	Sensors []UsageLine `json:"sensors"`
	Total   UsageLine   `json:"total"`
}

// UsageLine is one sensor's (or the overall) totals.
type UsageLine struct {
	SensorID   string  `json:"sensor_id,omitempty"`
	TotalHours float64 `json:"total_hours"`
	TotalKm    float64 `json:"total_km"`
	Records    int64   `json:"records"`
}

// Message is the sensor's message as /state shows it.
func (s StateSensor) Message() telemetry.Message {
	return telemetry.Message{SensorID: s.SensorID, Timestamp: s.Timestamp, Odometry: s.Odometry, Position: s.Position}
}

var httpClient = &http.Client{Timeout: 15 * time.Second}

// GetJSON fetches url and decodes a JSON body into v; it returns the HTTP
// status code. A body that is not JSON is an error whatever the status.
func GetJSON(url string, v any) (int, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %d, body is not JSON (%v): %.200s", url, resp.StatusCode, err, b)
	}
	return resp.StatusCode, nil
}

// CompareState returns nil when /state shows exactly the truth: the same
// sensors with the same last message, partition and offset.
func CompareState(got StateBody, want Truth) error {
	if len(got.Sensors) != len(want.Sensors) {
		return fmt.Errorf("/state has %d sensors, the topic %d", len(got.Sensors), len(want.Sensors))
	}
	for i, s := range got.Sensors {
		if i > 0 && got.Sensors[i-1].SensorID >= s.SensorID {
			return fmt.Errorf("/state sensors not sorted by id at %d (%s after %s)", i, s.SensorID, got.Sensors[i-1].SensorID)
		}
		w, ok := want.Sensors[s.SensorID]
		if !ok {
			return fmt.Errorf("/state has %s, the topic has no valid message of it", s.SensorID)
		}
		m := s.Message()
		if m != w.Message || s.Partition != w.Partition || s.Offset != w.Offset {
			return fmt.Errorf("%s: /state has %+v at %d/%d, the topic's last valid message is %+v at %d/%d",
				s.SensorID, m, s.Partition, s.Offset, w.Message, w.Partition, w.Offset)
		}
	}
	return nil
}
