package telemetry

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// Every value Encode writes takes the fast way, and reads back as itself.
func TestEncodeIsCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 10_000 {
		m := Message{
			SensorID:  []string{"sensor-01", "s", "machine 7/a", "x-" + string(rune('A'+i%26))}[i%4],
			Timestamp: 1 + rng.Int64N(MaxTimestamp),
			Odometry:  Odometry{HoursTot: Round2(rng.Float64() * MaxHours), KmTot: rng.Float64() * 1e6},
			Position:  Position{Lat: rng.Float64()*180 - 90, Lon: -rng.Float64() * 180},
		}
		if i%7 == 0 {
			m.Odometry.KmTot = 0
		}
		if i%11 == 0 {
			m.Odometry.HoursTot = 1e-7 // written with an exponent
		}
		v, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeCanonical(v)
		if !ok || got != m {
			t.Fatalf("%s: canonical %v %+v, want %+v", v, ok, got, m)
		}
	}
}

// Whatever the fast way accepts, the general way accepts with the same
// message; everything else is left to the general way.
func FuzzCanonicalDecode(f *testing.F) {
	for _, s := range []string{good,
		`{"sensor_id":"a","timestamp":-0,"odometry":{"hours_tot":0.5e3,"km_tot":-1E-2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a\u0062","timestamp":1,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":01,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":1.5e12,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":1e999,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":99999999999999999999,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":1.,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		fast, ok := decodeCanonical(v)
		if !ok {
			return
		}
		general, err := decodeGeneral(v)
		if err != nil || !reflect.DeepEqual(fast, general) {
			t.Fatalf("%q: fast %+v, general %+v %v", v, fast, general, err)
		}
	})
}

// BenchmarkDecode: the fast way and the general way on one product record.
func BenchmarkDecode(b *testing.B) {
	v := []byte(good)
	b.Run("canonical", func(b *testing.B) {
		for b.Loop() {
			if _, err := decode(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeGeneral(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
