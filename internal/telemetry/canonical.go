package telemetry

import "strconv"

// decodeCanonical reads the one exact form Encode writes (json.Marshal of
// a Message: those keys in that order, no spaces, an ASCII sensor id
// without escapes, numbers in JSON's grammar) in one pass, converting the
// numbers as it reads them. Replays decode a million of these, and the
// general path (encoding/json, several passes) costs most of a replay's
// time. Anything else, however small the difference, gives ok=false and
// goes the general way, so both ways accept and produce the same
// (FuzzCanonicalDecode checks it). ids gives the sensor id its string (nil:
// a new string each time).
func decodeCanonical(v []byte, ids *names) (m Message, ok bool) {
	r := canonicalReader{b: v}
	if !r.lit(`{"sensor_id":"`) {
		return Message{}, false
	}
	start := r.i
	for r.i < len(r.b) && r.b[r.i] != '"' {
		if c := r.b[r.i]; c < 0x20 || c > 0x7e || c == '\\' {
			return Message{}, false
		}
		r.i++
	}
	id := r.b[start:r.i]
	if !r.lit(`","timestamp":`) {
		return Message{}, false
	}
	if m.Timestamp, ok = r.integer(); !ok {
		return Message{}, false
	}
	if !r.lit(`,"odometry":{"hours_tot":`) {
		return Message{}, false
	}
	if m.Odometry.HoursTot, ok = r.float(); !ok || !r.lit(`,"km_tot":`) {
		return Message{}, false
	}
	if m.Odometry.KmTot, ok = r.float(); !ok || !r.lit(`},"position":{"lat":`) {
		return Message{}, false
	}
	if m.Position.Lat, ok = r.float(); !ok || !r.lit(`,"lon":`) {
		return Message{}, false
	}
	if m.Position.Lon, ok = r.float(); !ok || !r.lit("}}") || r.i != len(r.b) {
		return Message{}, false
	}
	m.SensorID = ids.of(id)
	return m, true
}

// names hands out one string per sensor id, so a replay does not allocate
// a million copies of ten names. A nil *names allocates each time.
type names struct {
	byName map[string]string
}

// maxNames bounds what names keeps (a topic of random ids must not grow
// it without end); past it, ids are allocated as without it.
const maxNames = 100_000

func (n *names) of(b []byte) string {
	if n == nil {
		return string(b)
	}
	if s, ok := n.byName[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(n.byName) < maxNames {
		if n.byName == nil {
			n.byName = map[string]string{}
		}
		n.byName[s] = s
	}
	return s
}

type canonicalReader struct {
	b []byte
	i int
}

func (r *canonicalReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// digits reads a run of decimal digits onto acc (acc*10 + digit each);
// past 19 digits acc has wrapped, which the caller checks by the count.
func (r *canonicalReader) digits(acc uint64) (uint64, int) {
	b, i := r.b, r.i
	for i < len(b) && b[i]-'0' < 10 {
		acc = acc*10 + uint64(b[i]-'0')
		i++
	}
	n := i - r.i
	r.i = i
	return acc, n
}

// intPart reads -?(0|[1-9][0-9]*) as its digits' value and count; ok is
// false when it is not there.
func (r *canonicalReader) intPart() (mant uint64, n int, neg, ok bool) {
	if r.i < len(r.b) && r.b[r.i] == '-' {
		neg = true
		r.i++
	}
	first := r.i
	mant, n = r.digits(0)
	return mant, n, neg, n == 1 || (n > 1 && r.b[first] != '0')
}

// integer reads a JSON number without fraction or exponent as an int64;
// anything else (or out of range) is false.
func (r *canonicalReader) integer() (int64, bool) {
	start := r.i
	mant, n, neg, ok := r.intPart()
	if !ok || (r.i < len(r.b) && (r.b[r.i] == '.' || r.b[r.i] == 'e' || r.b[r.i] == 'E')) {
		return 0, false
	}
	if n > 18 {
		v, err := strconv.ParseInt(string(r.b[start:r.i]), 10, 64)
		return v, err == nil
	}
	if neg {
		return -int64(mant), true
	}
	return int64(mant), true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// float reads one JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
// When its digits make an integer below 2^53 and it has at most 22
// decimals and no exponent, that integer and the power of ten are both
// exact float64s, so one division gives the correctly rounded value
// (strconv.ParseFloat's own fast path); any other number goes to
// strconv.ParseFloat.
func (r *canonicalReader) float() (float64, bool) {
	start := r.i
	mant, n, neg, ok := r.intPart()
	if !ok {
		return 0, false
	}
	decimals := 0
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if mant, decimals = r.digits(mant); decimals == 0 {
			return 0, false
		}
	}
	exact := n+decimals <= 19 && mant < 1<<53 && decimals < len(pow10)
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if _, n := r.digits(0); n == 0 {
			return 0, false
		}
		exact = false
	}
	if !exact {
		f, err := strconv.ParseFloat(string(r.b[start:r.i]), 64)
		return f, err == nil
	}
	f := float64(mant) / pow10[decimals]
	if neg {
		f = -f
	}
	return f, true
}
