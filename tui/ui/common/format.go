package common

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Fixed2 formats hours and km: always two decimals, rounded half away from
// zero like telemetry.Round2.
func Fixed2(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', 2, 64) }

// Signed2 formats a drift: "+1.25", "-0.50", "0.00".
func Signed2(cents int64) string {
	switch {
	case cents > 0:
		return "+" + Fixed2(float64(cents)/100)
	case cents < 0:
		return "-" + Fixed2(float64(-cents)/100)
	}
	return "0.00"
}

// Coord formats a latitude or longitude (4 decimals: about 10 m).
func Coord(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }

// Count formats a count with thousands separators: 12,345.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Ago formats the age of a reading: "3s ago", "4m ago", "2h ago".
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}

// Uptime formats how long a process has run: "42s", "3m07s", "1h02m".
func Uptime(d time.Duration) string {
	d = d.Truncate(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

var bars = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width samples scaled to their maximum, or to
// floor if that is larger (so a steady lag of 2 does not fill the bars); a
// negative sample (unknown) is a dot, so a gap is not mistaken for 0.
func Sparkline(samples []int64, width int, floor int64) string {
	if width <= 0 {
		return ""
	}
	if len(samples) > width {
		samples = samples[len(samples)-width:]
	}
	top := floor
	for _, s := range samples {
		top = max(top, s)
	}
	var b strings.Builder
	for _, s := range samples {
		switch {
		case s < 0:
			b.WriteRune('·')
		case top == 0:
			b.WriteRune(bars[0])
		default:
			// 0 stays on the baseline; anything above it shows at least one step.
			i := int(s * int64(len(bars)-1) / top)
			if s > 0 {
				i = max(1, i)
			}
			b.WriteRune(bars[i])
		}
	}
	return b.String()
}
