package kafkacfg

import (
	"crypto/rand"
	"encoding/hex"
)

// FreshGroup is prefix and 8 random hex digits: a group no earlier start
// used (the seed's uuid4().hex[:8]).
func FreshGroup(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails on supported platforms
	return prefix + hex.EncodeToString(b)
}
