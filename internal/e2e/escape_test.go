package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
)

// hostileID retitles a terminal that prints it raw (OSC 0, ended by BEL).
const hostileID = "\x1b]0;PWNED-BY-TOPIC\a"

// hostileShown is how the dashboard draws it: the control characters as
// visible glyphs.
const hostileShown = "␛]0;PWNED-BY-TOPIC␇"

// hostileRecord is a well-formed reading whose key and sensor_id are
// hostileID, made by the test's own client.
func hostileRecord(t *testing.T) [2][]byte {
	t.Helper()
	v, err := json.Marshal(map[string]any{
		"sensor_id": hostileID,
		"timestamp": time.Now().UnixMilli(),
		"odometry":  map[string]float64{"hours_tot": 12.5, "km_tot": 340.25},
		"position":  map[string]float64{"lat": 45.46, "lon": 9.19},
	})
	if err != nil {
		t.Fatal(err)
	}
	return [2][]byte{[]byte(hostileID), v}
}

// TestEscapeCodesOnScreen: a sensor id holding an escape sequence, read
// from the topic, is drawn with its control characters visible, and the
// terminal the dashboard runs in is not retitled.
func TestEscapeCodesOnScreen(t *testing.T) {
	d := newDashboard(t)
	tm := startTmuxDashboard(t, d, "--seed", "7", "--interval", "200ms", "--sensors", "3")
	screen := tm.await("every process running", 90*time.Second, func(s string) error {
		rows := procRows(s)
		for _, n := range []string{"producer", "consumer-current", "consumer-usage", "consumer-query"} {
			if r, ok := rows[n]; !ok || r.State != "running" {
				return fmt.Errorf("%s row %+v (found %v)", n, r, ok)
			}
		}
		return nil
	})
	titleBefore := tm.display("#{pane_title}")
	brokers := d.external
	if brokers == "" {
		m := headerBrokersRe.FindStringSubmatch(screen)
		if m == nil {
			t.Fatalf("no broker address in the header:\n%s", screen)
		}
		brokers = m[1]
	}
	Produce(t, brokers, d.topic, hostileRecord(t))
	screen = tm.await("consumer-current's fourth sensor", 30*time.Second, func(s string) error {
		if !strings.Contains(s, "LIVE 4 sensors") {
			return fmt.Errorf("not on screen yet")
		}
		return nil
	})
	if title := tm.display("#{pane_title}"); title != titleBefore {
		t.Fatalf("the pane's title changed from %q to %q", titleBefore, title)
	}
	// The id is cut to the sensors column's width: its first characters.
	if !strings.Contains(screen, hostileShown[:len("␛]0;PWN")]) {
		t.Fatalf("the sensor is not drawn as %q:\n%s", hostileShown, screen)
	}
	tm.key("q")
	if code := tm.awaitExit(60 * time.Second); code != 0 {
		t.Fatalf("the dashboard exited %d", code)
	}
	if title := tm.display("#{pane_title}"); title != titleBefore {
		t.Fatalf("the pane's title changed from %q to %q", titleBefore, title)
	}
}

// TestEscapeCodesHeadless: the headless log and the report carry no raw
// control character from the topic, and the report names the sensor in
// its visible form.
func TestEscapeCodesHeadless(t *testing.T) {
	if os.Getenv("KAFKA_BROKER") != "" {
		t.Skip("the record is produced on a broker of the test's own before the run")
	}
	d := newDashboard(t)
	brokers := embeddedtest.StartBroker(t, d.topic, Partitions)
	Produce(t, brokers, d.topic, hostileRecord(t))
	d.startHeadless("wait-caught-up 60s\nquit\n", "--brokers", brokers, "--seed", "7", "--interval", "100ms", "--sensors", "3")
	if code := d.waitExit(120 * time.Second); code != 0 {
		t.Fatalf("the dashboard exited %d:\n%s", code, Tail(d.stderr(), 30))
	}
	report, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"the headless log": d.stderr(), "the report": string(report)} {
		if i := strings.IndexAny(text, "\x1b\a"); i >= 0 {
			t.Errorf("%s holds a raw control character: %q", what, text[max(0, i-40):min(len(text), i+40)])
		}
		if i := strings.Index(text, `\u001b`); i >= 0 {
			t.Errorf("%s holds the escape, JSON-encoded: %q", what, text[max(0, i-40):min(len(text), i+40)])
		}
	}
	if !strings.Contains(string(report), hostileShown) {
		t.Errorf("the report does not name the sensor as %q", hostileShown)
	}
}
