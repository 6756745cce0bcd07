// Package redact hides the password of a connection URI (a MongoDB URI
// with credentials) in text that is printed or shown: errors, log lines,
// reports.
package redact

import (
	"bytes"
	"io"
	"regexp"
	"strings"
)

// userinfo is a URI's "scheme://user:password@": the password ends at the
// last "@" before the host, so a password holding "@" or "/" is hidden
// whole.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"']*):[^\s"']*@`)

// String returns s with every URI password replaced by ***:
// "mongodb://app:s3cret@db:27017/krl" becomes "mongodb://app:***@db:27017/krl".
func String(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return userinfo.ReplaceAllString(s, "${1}:***@")
}

// Error is err with its message redacted; errors.Is and errors.As still see
// the original.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := String(err.Error())
	if msg == err.Error() {
		return err
	}
	return redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

// Writer is w with every write redacted: for loggers, which write one
// whole record per call.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (rw writer) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("://")) {
		return rw.w.Write(p)
	}
	if _, err := io.WriteString(rw.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
