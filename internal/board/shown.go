package board

import (
	"reflect"

	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/visible"
)

// boardPkg is this package's path: only its own input types are cleaned.
var boardPkg = reflect.TypeFor[Tick]().PkgPath()

// shownInput is in with every text it carries fit to show: ids and
// reasons from the topic and lines a child printed are untrusted, so their
// control characters are made visible (no escape sequence reaches a
// terminal, a report or the headless log) and URI passwords hidden. This is
// where text enters the display model, once for every front end.
func shownInput(in Input) Input {
	if in == nil || reflect.TypeOf(in).PkgPath() != boardPkg {
		return in
	}
	return visible.Deep(in, Shown).(Input)
}

// Shown is untrusted text made fit to show: control characters visible,
// URI passwords hidden.
func Shown(s string) string { return visible.String(redact.String(s)) }
