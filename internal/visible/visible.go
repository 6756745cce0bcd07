// Package visible makes untrusted text safe to draw on a terminal: a
// sensor id from the topic or a line a child printed could otherwise carry
// escape sequences that retitle, recolour or rewrite the presenter's screen.
package visible

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character shown as a visible glyph:
// C0 as its Control Pictures symbol (ESC as ␛), DEL as ␡, C1 and bytes that
// are not UTF-8 as a \x escape. Tab and newline are kept: they are layout,
// not commands. s is returned as is when it holds nothing to change.
func String(s string) string {
	if Safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Safe reports whether s holds no character String would change.
func Safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return safeUTF8(s[i:])
		}
	}
	return true
}

func safeUTF8(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r < 0xa0 {
			return false
		}
		i += size
	}
	return true
}
