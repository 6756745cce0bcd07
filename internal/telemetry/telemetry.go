// Package telemetry owns the sensor-data message: its schema, decoding with
// validation, and the delta rule consumer-usage applies (and the audit
// recomputes). Nothing else in the project parses message values.
package telemetry

import (
	"encoding/json"
	"math"
	"time"
)

// DefaultTopic is the one topic of the product.
const DefaultTopic = "sensor-data"

// Odometry holds the machine's cumulative counters; both only grow.
type Odometry struct {
	HoursTot float64 `json:"hours_tot" bson:"hours_tot"`
	KmTot    float64 `json:"km_tot" bson:"km_tot"`
}

// Position is a GPS fix in decimal degrees.
type Position struct {
	Lat float64 `json:"lat" bson:"lat"`
	Lon float64 `json:"lon" bson:"lon"`
}

// Message is the value of one sensor-data record; the record key is SensorID.
type Message struct {
	SensorID  string   `json:"sensor_id" bson:"sensor_id"`
	Timestamp int64    `json:"timestamp" bson:"timestamp"` // epoch milliseconds
	Odometry  Odometry `json:"odometry" bson:"odometry"`
	Position  Position `json:"position" bson:"position"`
}

// Time returns the message timestamp as a time.Time in UTC.
func (m Message) Time() time.Time { return time.UnixMilli(m.Timestamp).UTC() }

// Encode returns the JSON value for m.
func Encode(m Message) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// Usage is one usage record: the delta between two messages of a sensor.
type Usage struct {
	SensorID   string  `json:"sensor_id" bson:"sensor_id"`
	Date       string  `json:"date" bson:"date"` // UTC day of the later message, YYYY-MM-DD
	DeltaHours float64 `json:"delta_hours" bson:"delta_hours"`
	DeltaKm    float64 `json:"delta_km" bson:"delta_km"`
}

// Round2 rounds to 2 decimals, half away from zero, as the seed's round(x, 2).
func Round2(f float64) float64 { return math.Round(f*100) / 100 }

// Delta is the seed's rule: current minus previous for hours and km, each
// rounded to 2 decimals. Record reports whether the delta is saved at all:
// only when one of the two is > 0 (an idle machine, or a replayed older
// message, produces no record).
func Delta(previous, current Message) (u Usage, record bool) {
	u = Usage{
		SensorID:   current.SensorID,
		Date:       current.Time().Format("2006-01-02"),
		DeltaHours: Round2(current.Odometry.HoursTot - previous.Odometry.HoursTot),
		DeltaKm:    Round2(current.Odometry.KmTot - previous.Odometry.KmTot),
	}
	return u, u.DeltaHours > 0 || u.DeltaKm > 0
}
