package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/cli"
)

func TestParseServeFlags(t *testing.T) {
	t.Setenv("KAFKA_BROKER", "") // --offsets-retention is refused for an external broker
	keys := filepath.Join(t.TempDir(), "authorized_keys")
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBaJk6FZbqv0SKUiM7/Ee4yUJ5t6+tHoJmBXM9JrdSvF alice@laptop\n"
	if err := os.WriteFile(keys, []byte(key), 0o600); err != nil {
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
	if f, err := parseServeFlags([]string{"--offsets-retention", "5s"}, io.Discard); err != nil || f.Lab.OffsetsRetention.String() != "5s" {
		t.Errorf("--offsets-retention 5s: %v, %v", f.Lab.OffsetsRetention, err)
	}
	for _, bad := range [][]string{
		{"--auth", "keys"},
		{"--auth", "keys", filepath.Join(t.TempDir(), "missing")},
		{"--auth", "password"},
		{"--max-labs", "0"},
		{"--ssh", "nonsense"},
		{"stray"},
		{"--usage-mode", "sloppy"},
		{"--handshake-timeout", "0s"},
		{"--idle", "-1m"},
		{"--offsets-retention", "500ms"},
		{"--offsets-retention", "1m", "--brokers", "127.0.0.1:9092"},
	} {
		if _, err := parseServeFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", strings.Join(bad, " "))
		}
	}
}

// --auth keys with a file nobody could enter by refuses to start (exit
// 2) and names the lines that are not keys.
func TestServeRefusesKeysNobodyCanUse(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ file, want string }{
		"empty":   {"", "no key in it: nobody could enter"},
		"garbage": {"not a key\n\n# a comment\nssh-rsa AAAA\n", "lines 1, 4: not public keys"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := parseServeFlags([]string{"--auth", "keys", path}, io.Discard)
		var out strings.Builder
		if err == nil || cli.Exit(&out, err) != cli.ExitUsage || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: %v (%q), want exit %d saying %q", name, err, out.String(), cli.ExitUsage, tc.want)
		}
	}
}
