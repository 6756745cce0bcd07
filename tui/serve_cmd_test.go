package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseServeFlags(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := parseServeFlags([]string{"--ssh", "0.0.0.0:2222", "--auth", "keys", keys, "--max-labs", "7", "--keep", "5m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.Auth != "keys" || f.AuthorizedKeys != keys || f.MaxLabs != 7 || f.Keep.String() != "5m0s" || f.Listen != "0.0.0.0:2222" {
		t.Errorf("parsed %+v", f.Config)
	}
	if f, err := parseServeFlags(nil, io.Discard); err != nil || f.Auth != "open" || f.Listen != "127.0.0.1:2222" {
		t.Errorf("defaults: %+v, %v", f.Config, err)
	}
	for _, bad := range [][]string{
		{"--auth", "keys"},
		{"--auth", "keys", filepath.Join(t.TempDir(), "missing")},
		{"--auth", "password"},
		{"--max-labs", "0"},
		{"--ssh", "nonsense"},
		{"stray"},
		{"--usage-mode", "sloppy"},
	} {
		if _, err := parseServeFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", strings.Join(bad, " "))
		}
	}
}
