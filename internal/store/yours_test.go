package store_test

import (
	"context"
	"net/url"
	"strings"

	"testing"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// TestScanRecords: records written as a consumer of the user's writes
// them (any _id, no seq, numbers as ints or doubles) are summed in cents
// per sensor, sorted by the message they come from; every record that
// breaks the schema is counted under its reason and summed nowhere.
func TestScanRecords(t *testing.T) {
	st, uri := connect(t)
	ctx := context.Background()
	client, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = store.DefaultDatabase
	}
	coll := client.Database(db).Collection("usage")
	docs := []any{
		bson.M{"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": 0.1, "delta_km": 0.25, "partition": 1, "offset": int64(12)},
		bson.M{"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": 0.2, "delta_km": 1, "partition": 1, "offset": int64(9)},
		bson.M{"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": 0.2, "delta_km": 1, "partition": 1, "offset": int64(9)},
		bson.M{"sensor_id": "sensor-02", "date": "2026-12-04", "delta_hours": int32(1), "delta_km": 0.07},
		// malformed, one per reason
		bson.M{"date": "2026-12-04", "delta_hours": 1.0, "delta_km": 1.0},
		bson.M{"sensor_id": "sensor-01", "date": "04/12/2026", "delta_hours": 1.0, "delta_km": 1.0},
		bson.M{"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": "1.0", "delta_km": 1.0},
		bson.M{"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": -0.5, "delta_km": 1.0},
		bson.M{"sensor_id": "sensor-01", "date": "2026-12-04", "delta_hours": 0.5, "delta_km": 1.0, "partition": 1},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	sc, err := st.ScanRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Records != len(docs) {
		t.Fatalf("read %d records, inserted %d", sc.Records, len(docs))
	}
	s1 := sc.Sensors["sensor-01"]
	if !s1.Located() || s1.Summary.Records != 3 || s1.Summary.HoursCents != 50 || s1.Summary.KmCents != 225 ||
		s1.Summary.Through != (store.Position{Partition: 1, Offset: 12}) {
		t.Fatalf("sensor-01: %+v", s1)
	}
	if got := []int64{s1.Records[0].Offset, s1.Records[1].Offset, s1.Records[2].Offset}; got[0] != 9 || got[1] != 9 || got[2] != 12 {
		t.Fatalf("sensor-01's records not in message order: %v", got)
	}
	if s1.Records[2].Seq != 3 {
		t.Fatalf("seqs: %+v", s1.Records)
	}
	s2 := sc.Sensors["sensor-02"]
	if s2.Located() || s2.Unlocated != 1 || s2.Summary.HoursCents != 100 || s2.Summary.KmCents != 7 {
		t.Fatalf("sensor-02: %+v", s2)
	}
	want := map[string]int{
		"sensor_id missing or not a string": 1, "date not YYYY-MM-DD": 1, "delta_hours not a number": 1,
		"delta_hours negative": 1, "partition and offset not both whole numbers ≥ 0": 1,
	}
	for why, n := range want {
		if sc.Malformed[why] != n || sc.Example[why] == "" {
			t.Errorf("malformed %q: %d (example %q), want %d", why, sc.Malformed[why], sc.Example[why], n)
		}
	}
	if len(sc.Malformed) != len(want) {
		t.Errorf("malformed reasons: %v", sc.Malformed)
	}
}
