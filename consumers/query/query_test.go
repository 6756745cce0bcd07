package query

import (
	"encoding/json"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

func TestViewIsSortedAndExact(t *testing.T) {
	v := View(map[string]store.Totals{
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
	empty, _ := json.Marshal(View(nil))
	if string(empty) != `{"sensors":[],"total":{"total_hours":0,"total_km":0,"records":0}}` {
		t.Fatalf("empty view %s", empty)
	}
}

func TestFlags(t *testing.T) {
	if _, err := mongoHost("http://x"); err == nil {
		t.Fatal("http URI accepted")
	}
	if h, err := mongoHost("mongodb://u:p@db:27017/krl"); err != nil || h != "db:27017" {
		t.Fatalf("mongoHost = %q, %v", h, err)
	}
}
