package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/lab"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// TestHelpListsTheKeys: -h prints every key of the '?' view, from the key
// map itself, beside the flags.
func TestHelpListsTheKeys(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseDashboardFlags([]string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	help := out.String()
	km := ui.DefaultKeyMap()
	for _, column := range km.FullHelp() {
		for _, k := range column {
			line := k.Help().Key + " "
			if !strings.Contains(help, "  "+line) || !strings.Contains(help, k.Help().Desc) {
				t.Errorf("-h does not list %q (%s):\n%s", k.Help().Key, k.Help().Desc, help)
			}
		}
	}
	for _, want := range []string{"dashboard keys:", "dashboard flags:", "-preload N", "-seed"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h lacks %q:\n%s", want, help)
		}
	}
}

// TestBadFlagPrintedOnce: a bad flag's error reaches the terminal once, not
// once from the flag package and once more from the exit path.
func TestBadFlagPrintedOnce(t *testing.T) {
	var out, errOut bytes.Buffer
	_, err := parseDashboardFlags([]string{"--nope"}, &out)
	if code := cli.Exit(&errOut, err); code != cli.ExitUsage {
		t.Fatalf("exit code %d, want %d", code, cli.ExitUsage)
	}
	all := out.String() + errOut.String()
	if n := strings.Count(all, "-nope"); n != 1 {
		t.Fatalf("the error is printed %d times:\n%s", n, all)
	}
	if strings.Contains(all, "dashboard flags:") {
		t.Fatalf("a bad flag prints the whole usage:\n%s", all)
	}
}

func TestStoreLatencyFlag(t *testing.T) {
	f, err := parseDashboardFlags([]string{"--store-latency", "300ms"}, io.Discard)
	if err != nil || f.StoreLatency != 300*time.Millisecond {
		t.Fatalf("--store-latency 300ms: %v %s", err, f.StoreLatency)
	}
	for _, args := range [][]string{
		{"--store-latency", "-1s"},
		{"--store-latency", "2m"},
		{"--store-latency", "1s", "--mongo", "mongodb://127.0.0.1:27017/krl"},
	} {
		if _, err := parseDashboardFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestConnectTimeoutFlag(t *testing.T) {
	f, err := parseDashboardFlags(nil, io.Discard)
	if err != nil || f.ConnectTimeout != lab.DefaultConnectTimeout {
		t.Fatalf("default --connect-timeout: %v %s", err, f.ConnectTimeout)
	}
	if f, err = parseDashboardFlags([]string{"--connect-timeout", "3s"}, io.Discard); err != nil || f.ConnectTimeout != 3*time.Second {
		t.Fatalf("--connect-timeout 3s: %v %s", err, f.ConnectTimeout)
	}
	for _, bad := range []string{"0s", "500ms", "6m", "soon"} {
		if _, err := parseDashboardFlags([]string{"--connect-timeout", bad}, io.Discard); err == nil {
			t.Errorf("--connect-timeout %s accepted", bad)
		}
	}
}

func TestClusterFlag(t *testing.T) {
	t.Setenv("KAFKA_BROKER", "")
	f, err := parseDashboardFlags([]string{"--cluster", "3"}, io.Discard)
	if err != nil || f.Cluster != 3 {
		t.Fatalf("--cluster 3: %v %d", err, f.Cluster)
	}
	if names := f.Processes(); !strings.Contains(strings.Join(names, " "), "controller broker-1 broker-2 broker-3") || slices.Contains(names, "broker") {
		t.Fatalf("--cluster 3 supervises %v", names)
	}
	for _, args := range [][]string{
		{"--cluster", "-1"},
		{"--cluster", "6"},
		{"--cluster", "3", "--brokers", "127.0.0.1:9092"},
		{"--cluster", "3", "--preload", "100"},
	} {
		if _, err := parseDashboardFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestOffsetsRetentionFlag(t *testing.T) {
	t.Setenv("KAFKA_BROKER", "")
	for args, want := range map[string]time.Duration{
		"--offsets-retention 5s":             5 * time.Second,
		"--offsets-retention 2m --cluster 1": 2 * time.Minute,
	} {
		f, err := parseDashboardFlags(strings.Fields(args), io.Discard)
		if err != nil || f.OffsetsRetention != want {
			t.Errorf("%s: %v %s", args, err, f.OffsetsRetention)
		}
	}
	for args, says := range map[string]string{
		"--offsets-retention -5s":                                "between 1s and",
		"--offsets-retention 500ms":                              "between 1s and",
		"--offsets-retention soon":                               "invalid value",
		"--offsets-retention 30s --cluster 1":                    "at least 1m",
		"--offsets-retention 90s --cluster 1":                    "whole minutes",
		"--offsets-retention 1m --brokers 127.0.0.1:9092":        "external",
		"--offsets-retention 1m --cluster 1 --brokers 1.2.3.4:9": "cannot be combined",
	} {
		_, err := parseDashboardFlags(strings.Fields(args), io.Discard)
		if code := cli.Exit(io.Discard, err); code != cli.ExitUsage || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: exit %d, %v; want exit %d saying %q", args, code, err, cli.ExitUsage, says)
		}
	}
}
