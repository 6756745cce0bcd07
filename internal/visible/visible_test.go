package visible

import (
	"errors"
	"io"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"sensor-01":               "sensor-01",
		"\x1b]0;PWNED-BY-TOPIC\a": "␛]0;PWNED-BY-TOPIC␇",
		"a\x1b[31mred":            "a␛[31mred",
		"tab\tnew\nline":          "tab\tnew\nline",
		"cr\rdel\x7f":             "cr␍del␡",
		"csi\u009b2J":             `csi\x9b2J`,
		"bad\xffbyte":             `bad\xffbyte`,
		"ünïcødé ␛ ok":            "ünïcødé ␛ ok",
		"\x00":                    "␀",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		if Safe(in) != (in == want) {
			t.Errorf("Safe(%q) = %v", in, Safe(in))
		}
	}
}

type row struct {
	ID    string
	N     int
	Tags  []string
	Last  *row
	Err   error
	Extra map[int32]row
	Any   any
	hid   string
}

func TestDeepCopiesOnlyWhatChanges(t *testing.T) {
	orig := row{ID: "a\x1b", N: 1, Tags: []string{"ok", "b\x07"}, Last: &row{ID: "c\x1b"},
		Err: errors.Join(io.EOF, errors.New("d\x1b")), Extra: map[int32]row{1: {ID: "e\x1b"}}, Any: "f\x1b", hid: "g\x1b"}
	got := Deep(orig, String).(row)
	if got.ID != "a␛" || got.Tags[1] != "b␇" || got.Last.ID != "c␛" || got.Extra[1].ID != "e␛" || got.Any != "f␛" {
		t.Fatalf("not cleaned: %+v", got)
	}
	if got.Err.Error() != "EOF\nd␛" || !errors.Is(got.Err, io.EOF) {
		t.Fatalf("error: %q, is EOF %v", got.Err, errors.Is(got.Err, io.EOF))
	}
	if orig.ID != "a\x1b" || orig.Tags[1] != "b\x07" || orig.Last.ID != "c\x1b" || orig.Extra[1].ID != "e\x1b" {
		t.Fatalf("the original changed: %+v", orig)
	}
	clean := row{ID: "x", Tags: []string{"y"}}
	if got := Deep(clean, String).(row); &got.Tags[0] != &clean.Tags[0] {
		t.Fatal("a clean value was copied")
	}
}
