package api

import (
	"encoding/json"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func TestUsageFromTotalsIsSortedAndExact(t *testing.T) {
	v := UsageFromTotals(map[string]store.Totals{
		"sensor-02": {HoursCents: 30, KmCents: 99, Records: 2},
		"sensor-01": {HoursCents: 10, KmCents: 20, Records: 1},
	})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sensors":[{"sensor_id":"sensor-01","total_hours":0.1,"total_km":0.2,"records":1},` +
		`{"sensor_id":"sensor-02","total_hours":0.3,"total_km":0.99,"records":2}],` +
		`"total":{"total_hours":0.4,"total_km":1.19,"records":3}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	empty, _ := json.Marshal(UsageFromTotals(nil))
	if string(empty) != `{"sensors":[],"total":{"total_hours":0,"total_km":0,"records":0}}` {
		t.Fatalf("empty view %s", empty)
	}
}

func TestSensorStateRoundTrip(t *testing.T) {
	m := telemetry.Message{SensorID: "sensor-01", Timestamp: 1700000000000,
		Odometry: telemetry.Odometry{HoursTot: 12.5, KmTot: 40.25}, Position: telemetry.Position{Lat: 45.1, Lon: 9.2}}
	s := SensorStateOf(m, 2, 17)
	if s.Message() != m || s.Partition != 2 || s.Offset != 17 {
		t.Fatalf("round trip %+v", s)
	}
	b, _ := json.Marshal(s)
	want := `{"sensor_id":"sensor-01","timestamp":1700000000000,"odometry":{"hours_tot":12.5,"km_tot":40.25},"position":{"lat":45.1,"lon":9.2},"partition":2,"offset":17}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
