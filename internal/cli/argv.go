package cli

import (
	"errors"
	"strings"
)

// SplitArgs splits a command line into its arguments as a POSIX shell
// would split words, and does nothing else a shell does: no variables, no
// globs, no pipes, no redirections. Blanks separate arguments; '…' keeps
// everything inside as it is; "…" keeps everything inside but a backslash
// before " or \; outside quotes a backslash keeps the next character.
func SplitArgs(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	const (
		plain = iota
		single
		double
	)
	state := plain
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch state {
		case single:
			if r == '\'' {
				state = plain
			} else {
				cur.WriteRune(r)
			}
		case double:
			switch {
			case r == '"':
				state = plain
			case r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\'):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		default:
			switch {
			case r == ' ' || r == '\t' || r == '\n':
				if inWord {
					args = append(args, cur.String())
					cur.Reset()
					inWord = false
				}
				continue
			case r == '\'':
				state = single
			case r == '"':
				state = double
			case r == '\\':
				if i+1 == len(rs) {
					return nil, errors.New("a backslash ends the command")
				}
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
			inWord = true
		}
	}
	if state != plain {
		return nil, errors.New("a quote is not closed")
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}
