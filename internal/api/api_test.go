package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func TestUsageFromCoverageIsSortedAndExact(t *testing.T) {
	cov := map[string]store.Covered{
		"sensor-02": {Totals: store.Totals{HoursCents: 30, KmCents: 99, Records: 2}, Through: store.Position{Partition: 2, Offset: 41}, Partitions: 1},
		"sensor-01": {Totals: store.Totals{HoursCents: 10, KmCents: 20, Records: 1}, Through: store.Position{Partition: 0, Offset: 7}, Partitions: 1},
	}
	v := UsageFromCoverage(cov)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sensors":[{"sensor_id":"sensor-01","total_hours":0.1,"total_km":0.2,"records":1,"through":{"partition":0,"offset":7},"partitions":1},` +
		`{"sensor_id":"sensor-02","total_hours":0.3,"total_km":0.99,"records":2,"through":{"partition":2,"offset":41},"partitions":1}],` +
		`"total":{"total_hours":0.4,"total_km":1.19,"records":3}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Usage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for id, c := range back.CoveredBySensor() {
		if !reflect.DeepEqual(c, cov[id]) {
			t.Fatalf("%s: decoded %+v, want %+v", id, c, cov[id])
		}
	}
	empty, _ := json.Marshal(UsageFromCoverage(nil))
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
