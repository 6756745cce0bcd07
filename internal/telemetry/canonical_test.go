package telemetry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
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
		got, ok := decodeCanonical(v, nil)
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
		// the fast float's edges: 2^53 and past it, 19 and 20 digits, 22 and 23 decimals, -0
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":9007199254740992,"km_tot":9007199254740993},"position":{"lat":-0,"lon":-0.0}}`,
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":1234567890123456789,"km_tot":12345678901234567890},"position":{"lat":0.30000000000000004,"lon":2}}`,
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":0.0000000000000000000001,"km_tot":0.00000000000000000000001},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":999999999999999999,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":9223372036854775807,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":-9223372036854775808,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		// keys given twice: the general way refuses them, so the fast one must not take them
		`{"sensor_id":"a","sensor_id":"b","timestamp":1,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a","timestamp":1,"odometry":{"hours_tot":1,"km_tot":2,"km_tot":3},"position":{"lat":1,"lon":2}}`,
		`{"sensor_id":"a ","timestamp":1,"odometry":{"hours_tot":1,"km_tot":2},"position":{"lat":1,"lon":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		fast, ok := decodeCanonical(v, &names{})
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
			if _, err := decode(v, nil); err != nil {
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

// BenchmarkJudge: a Validator over a stream like the producer's (10
// sensors, growing odometers), as a replay judges it.
func BenchmarkJudge(b *testing.B) {
	const n = 4096
	keys, values := make([][]byte, n), make([][]byte, n)
	for i := range n {
		id := fmt.Sprintf("sensor-%02d", i%10+1)
		v, err := Encode(Message{SensorID: id, Timestamp: 1_796_188_980_949 + int64(i)*1000,
			Odometry: Odometry{HoursTot: Round2(2535.36 + float64(i)*0.01), KmTot: Round2(4659.14 + float64(i)*0.07)},
			Position: Position{Lat: 44.862585, Lon: 10.095188}})
		if err != nil {
			b.Fatal(err)
		}
		keys[i], values[i] = []byte(id), v
	}
	v := NewValidator()
	off := int64(0)
	for b.Loop() {
		i := int(off % n)
		if _, verdict, err := v.Judge(0, off, keys[i], values[i]); verdict != Valid {
			if i == 0 { // the stream starts again lower: a fresh validator
				v = NewValidator()
				continue
			}
			b.Fatal(verdict, err)
		}
		off++
	}
}

// The fast float is strconv.ParseFloat to the bit, on shortest forms of
// random float64s and on random digit strings around its limits.
func TestCanonicalFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		if n > 1 && b[0] == '0' {
			b[0] = '1'
		}
		return string(b)
	}
	for i := range 300_000 {
		var s string
		switch i % 3 {
		case 0:
			s = strconv.FormatFloat(rng.Float64()*math.Pow(10, float64(rng.IntN(12))), 'f', -1, 64)
		case 1:
			s = digits(1+rng.IntN(20)) + "." + digits(1+rng.IntN(24))
		default:
			s = digits(1 + rng.IntN(20))
		}
		if rng.IntN(4) == 0 {
			s = "-" + s
		}
		want, werr := strconv.ParseFloat(s, 64)
		r := canonicalReader{b: []byte(s)}
		got, ok := r.float()
		if ok != (werr == nil) || r.i != len(s) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: fast %v (%v, read %d), strconv %v (%v)", s, got, ok, r.i, want, werr)
		}
	}
}
