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
	s := splitter{rs: []rune(line)}
	for s.i = 0; s.i < len(s.rs); s.i++ {
		var err error
		switch s.quote {
		case '\'':
			s.single()
		case '"':
			s.double()
		default:
			err = s.plain()
		}
		if err != nil {
			return nil, err
		}
	}
	if s.quote != 0 {
		return nil, errors.New("a quote is not closed")
	}
	if s.inWord {
		s.args = append(s.args, s.cur.String())
	}
	return s.args, nil
}

// splitter is SplitArgs' state: the runes, where it is, the quote it is
// in (0: none) and the word it is making.
type splitter struct {
	rs     []rune
	i      int
	quote  rune
	cur    strings.Builder
	inWord bool
	args   []string
}

func (s *splitter) single() {
	if r := s.rs[s.i]; r == '\'' {
		s.quote = 0
	} else {
		s.cur.WriteRune(r)
	}
}

func (s *splitter) double() {
	switch r := s.rs[s.i]; {
	case r == '"':
		s.quote = 0
	case r == '\\' && s.i+1 < len(s.rs) && (s.rs[s.i+1] == '"' || s.rs[s.i+1] == '\\'):
		s.i++
		s.cur.WriteRune(s.rs[s.i])
	default:
		s.cur.WriteRune(r)
	}
}

func (s *splitter) plain() error {
	switch r := s.rs[s.i]; r {
	case ' ', '\t', '\n':
		if s.inWord {
			s.args = append(s.args, s.cur.String())
			s.cur.Reset()
			s.inWord = false
		}
		return nil
	case '\'', '"':
		s.quote = r
	case '\\':
		if s.i+1 == len(s.rs) {
			return errors.New("a backslash ends the command")
		}
		s.i++
		s.cur.WriteRune(s.rs[s.i])
	default:
		s.cur.WriteRune(r)
	}
	s.inWord = true
	return nil
}
