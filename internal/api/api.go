// Package api owns the bodies of the consumers' HTTP answers: the servers
// (consumers/current, consumers/query) encode them and the dashboard
// (internal/observe) decodes them, so the contract is written once.
package api

import (
	"sort"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// State is consumer-current's GET /state answer.
type State struct {
	GroupID   string            `json:"group_id"`
	CaughtUp  bool              `json:"caught_up"`
	Processed int64             `json:"processed"`
	Invalid   int64             `json:"invalid"`
	Positions []status.Position `json:"positions"`
	// Sensors is sorted by SensorID.
	Sensors []SensorState `json:"sensors"`
}

// SensorState is the last message consumer-current applied for a sensor.
type SensorState struct {
	SensorID  string             `json:"sensor_id"`
	Timestamp int64              `json:"timestamp"` // epoch milliseconds
	Odometry  telemetry.Odometry `json:"odometry"`
	Position  telemetry.Position `json:"position"`
	Partition int32              `json:"partition"`
	Offset    int64              `json:"offset"`
}

// Usage is consumer-query's GET /usage answer.
type Usage struct {
	// Sensors is sorted by SensorID.
	Sensors []SensorUsage `json:"sensors"`
	Total   UsageTotal    `json:"total"`
}

// UsageTotal is an accumulated usage as the query consumer reports it.
type UsageTotal struct {
	TotalHours float64 `json:"total_hours"`
	TotalKm    float64 `json:"total_km"`
	Records    int64   `json:"records"`
}

// Totals converts to exact hundredths (the values are sums of 2-decimal
// deltas), the unit the audit compares in.
func (t UsageTotal) Totals() store.Totals {
	return store.Totals{HoursCents: store.Cents(t.TotalHours), KmCents: store.Cents(t.TotalKm), Records: t.Records}
}

// SensorUsage is one sensor's line of Usage. Through and Partitions come
// from the same read as the totals: Through is the furthest usage record
// the totals include (the highest offset), Partitions how many partitions
// those records came from (1 normally). A reader compares the totals with
// the topic up to Through, so the comparison is of one cut of the stream.
type SensorUsage struct {
	SensorID string `json:"sensor_id"`
	UsageTotal
	Through    store.Position `json:"through"`
	Partitions int            `json:"partitions"`
	// Furthest: per partition, the furthest record the totals include
	// (store.Summary.Furthest).
	Furthest []store.Position `json:"furthest,omitempty"`
}

// Covered is the line as the store's exact coverage.
func (s SensorUsage) Covered() store.Covered {
	return store.Covered{Totals: s.Totals(), Through: s.Through, Partitions: s.Partitions, Furthest: s.Furthest}
}

// BySensor indexes the per-sensor totals in exact hundredths.
func (u Usage) BySensor() map[string]store.Totals {
	out := make(map[string]store.Totals, len(u.Sensors))
	for _, s := range u.Sensors {
		out[s.SensorID] = s.Totals()
	}
	return out
}

// CoveredBySensor indexes the per-sensor lines as the store's coverage.
func (u Usage) CoveredBySensor() map[string]store.Covered {
	out := make(map[string]store.Covered, len(u.Sensors))
	for _, s := range u.Sensors {
		out[s.SensorID] = s.Covered()
	}
	return out
}

// UsageFromCoverage builds the /usage body from the store's summaries
// (store.UsageCoverage), sorted by sensor id; sums are done in cents and
// converted once.
func UsageFromCoverage(cov map[string]store.Covered) Usage {
	u := Usage{Sensors: make([]SensorUsage, 0, len(cov))}
	var all store.Totals
	for id, c := range cov {
		t := c.Totals
		u.Sensors = append(u.Sensors, SensorUsage{SensorID: id, UsageTotal: totalOf(t),
			Through: c.Through, Partitions: c.Partitions, Furthest: c.Furthest})
		all.HoursCents += t.HoursCents
		all.KmCents += t.KmCents
		all.Records += t.Records
	}
	sort.Slice(u.Sensors, func(i, j int) bool { return u.Sensors[i].SensorID < u.Sensors[j].SensorID })
	u.Total = totalOf(all)
	return u
}

func totalOf(t store.Totals) UsageTotal {
	return UsageTotal{TotalHours: t.Hours(), TotalKm: t.Km(), Records: t.Records}
}

// SensorStateOf is the /state line for message m read at partition/offset.
func SensorStateOf(m telemetry.Message, partition int32, offset int64) SensorState {
	return SensorState{SensorID: m.SensorID, Timestamp: m.Timestamp, Odometry: m.Odometry,
		Position: m.Position, Partition: partition, Offset: offset}
}

// Message is the telemetry message the line holds.
func (s SensorState) Message() telemetry.Message {
	return telemetry.Message{SensorID: s.SensorID, Timestamp: s.Timestamp, Odometry: s.Odometry, Position: s.Position}
}
