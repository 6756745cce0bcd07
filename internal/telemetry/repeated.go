package telemetry

import (
	"bytes"
	"encoding/json"
)

// repeatedKey finds a key given twice in one object of a valid JSON value
// (at any depth). encoding/json keeps the last of them without a word, so
// such a value would mean whatever its last copy of a key says: the rule
// refuses it instead (Malformed). Keys are compared as decoded, so "a" and
// "\u0061" are the same key; case matters, as it does for field names.
func repeatedKey(value []byte) (string, bool) {
	type container struct {
		keys    map[string]bool // nil: an array
		wantKey bool
	}
	var open []*container
	valueDone := func() {
		if n := len(open); n > 0 && open[n-1].keys != nil {
			open[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // the end (the value is known to be valid JSON)
		}
		if n := len(open); n > 0 && open[n-1].wantKey {
			top := open[n-1]
			k, isKey := tok.(string)
			if !isKey { // the object's '}'
				open = open[:n-1]
				valueDone()
				continue
			}
			if top.keys[k] {
				return k, true
			}
			top.keys[k], top.wantKey = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, &container{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			open = append(open, &container{})
		case json.Delim(']'):
			open = open[:len(open)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
