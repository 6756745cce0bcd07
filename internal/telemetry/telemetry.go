// Package telemetry owns the sensor-data message: its schema, decoding with
// validation, and the delta rule consumer-usage applies (and the audit
// recomputes). Nothing else in the project parses message values.
package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
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

// ErrInvalid wraps every reason a record is rejected, so callers can count
// and skip with errors.Is(err, ErrInvalid).
var ErrInvalid = errors.New("invalid message")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// wire mirrors Message with pointers so a missing field is told apart from a zero.
type wire struct {
	SensorID  *string `json:"sensor_id"`
	Timestamp *int64  `json:"timestamp"`
	Odometry  *struct {
		HoursTot *float64 `json:"hours_tot"`
		KmTot    *float64 `json:"km_tot"`
	} `json:"odometry"`
	Position *struct {
		Lat *float64 `json:"lat"`
		Lon *float64 `json:"lon"`
	} `json:"position"`
}

// Decode parses and validates one record. A missing field, a wrong type, a
// key that disagrees with sensor_id or an impossible value is ErrInvalid;
// it never comes back as a zero.
func Decode(key, value []byte) (Message, error) {
	if len(value) == 0 {
		return Message{}, invalid("empty value")
	}
	var w wire
	if err := json.Unmarshal(value, &w); err != nil {
		return Message{}, invalid("not JSON of the expected shape: %v", err)
	}
	switch {
	case w.SensorID == nil:
		return Message{}, invalid("missing sensor_id")
	case w.Timestamp == nil:
		return Message{}, invalid("missing timestamp")
	case w.Odometry == nil || w.Odometry.HoursTot == nil || w.Odometry.KmTot == nil:
		return Message{}, invalid("missing odometry.hours_tot or odometry.km_tot")
	case w.Position == nil || w.Position.Lat == nil || w.Position.Lon == nil:
		return Message{}, invalid("missing position.lat or position.lon")
	}
	m := Message{
		SensorID:  *w.SensorID,
		Timestamp: *w.Timestamp,
		Odometry:  Odometry{HoursTot: *w.Odometry.HoursTot, KmTot: *w.Odometry.KmTot},
		Position:  Position{Lat: *w.Position.Lat, Lon: *w.Position.Lon},
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	if key != nil && string(key) != m.SensorID {
		return Message{}, invalid("key %q does not match sensor_id %q", key, m.SensorID)
	}
	return m, nil
}

// Validate checks the message on its own (not against earlier messages).
func (m Message) Validate() error {
	switch {
	case strings.TrimSpace(m.SensorID) == "":
		return invalid("empty sensor_id")
	case m.Timestamp <= 0:
		return invalid("timestamp %d is not a positive epoch-ms value", m.Timestamp)
	case !finite(m.Odometry.HoursTot) || m.Odometry.HoursTot < 0:
		return invalid("hours_tot %v is negative or not finite", m.Odometry.HoursTot)
	case !finite(m.Odometry.KmTot) || m.Odometry.KmTot < 0:
		return invalid("km_tot %v is negative or not finite", m.Odometry.KmTot)
	case !finite(m.Position.Lat) || m.Position.Lat < -90 || m.Position.Lat > 90:
		return invalid("lat %v out of range", m.Position.Lat)
	case !finite(m.Position.Lon) || m.Position.Lon < -180 || m.Position.Lon > 180:
		return invalid("lon %v out of range", m.Position.Lon)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// ErrBackwards is returned by CheckSuccessor when a later record of a sensor
// carries a smaller odometer than the one before it in the topic.
var ErrBackwards = fmt.Errorf("%w: odometer went backwards", ErrInvalid)

// CheckSuccessor rejects next when it is a later record of the same sensor
// whose odometers are below prev's. Both counters only grow on a machine, so
// such a record is bad input, not a reading.
func CheckSuccessor(prev, next Message) error {
	if next.Odometry.HoursTot < prev.Odometry.HoursTot || next.Odometry.KmTot < prev.Odometry.KmTot {
		return fmt.Errorf("%w (hours %.2f -> %.2f, km %.2f -> %.2f)", ErrBackwards,
			prev.Odometry.HoursTot, next.Odometry.HoursTot, prev.Odometry.KmTot, next.Odometry.KmTot)
	}
	return nil
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
