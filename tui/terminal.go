package main

import (
	"errors"
	"os"

	"github.com/charmbracelet/x/term"
)

// errNoTerminal: neither stdin nor the controlling terminal can give the
// screen its keys.
var errNoTerminal = errors.New("stdin is not a terminal and /dev/tty cannot be opened")

// checkTerminal makes bubbletea's own choice of input ahead of time: stdin
// when it is a terminal, else the controlling terminal, /dev/tty. Checked
// before anything is created, so a start without a terminal leaves
// nothing behind.
func checkTerminal() error {
	if term.IsTerminal(os.Stdin.Fd()) {
		return nil
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return errNoTerminal
	}
	return tty.Close()
}
