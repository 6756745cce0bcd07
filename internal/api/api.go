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

// SensorUsage is one sensor's line of Usage.
type SensorUsage struct {
	SensorID string `json:"sensor_id"`
	UsageTotal
}

// BySensor indexes the per-sensor totals in exact hundredths.
func (u Usage) BySensor() map[string]store.Totals {
	out := make(map[string]store.Totals, len(u.Sensors))
	for _, s := range u.Sensors {
		out[s.SensorID] = s.Totals()
	}
	return out
}

// UsageFromTotals builds the /usage body from the store's exact totals,
// sorted by sensor id; sums are done in cents and converted once.
func UsageFromTotals(totals map[string]store.Totals) Usage {
	u := Usage{Sensors: make([]SensorUsage, 0, len(totals))}
	var all store.Totals
	for id, t := range totals {
		u.Sensors = append(u.Sensors, SensorUsage{SensorID: id, UsageTotal: totalOf(t)})
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
