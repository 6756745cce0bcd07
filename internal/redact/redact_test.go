package redact

import (
	"errors"
	"io"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"mongodb://app:s3cret@db:27017/krl":                        "mongodb://app:***@db:27017/krl",
		`MongoDB at mongodb://u:p@w@h/x did not answer`:            `MongoDB at mongodb://u:***@h/x did not answer`,
		`{"error":"parse \"mongodb+srv://a:b%40c@h\": bad","x":1}`: `{"error":"parse \"mongodb+srv://a:***@h\": bad","x":1}`,
		"mongodb://127.0.0.1:27017/krl":                            "mongodb://127.0.0.1:27017/krl",
		"mongodb://app@h/krl":                                      "mongodb://app@h/krl",
		"no uri here: a:b@c":                                       "no uri here: a:b@c",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	err := Error(errors.Join(io.EOF, errors.New("mongodb://u:pw@h")))
	if err.Error() != "EOF\nmongodb://u:***@h" || !errors.Is(err, io.EOF) {
		t.Fatalf("Error: %q", err)
	}
}
