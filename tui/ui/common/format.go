package common

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
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
func Count(n int64) string { return board.Count(n) }

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

// SparkLevel is the bar a lag of n messages draws in a window whose
// largest sample is peak: 0 on the baseline, the peak at the top, linear in
// between, so a lag growing from 12 to 62 climbs and one that fell to 0
// touches the baseline.
func SparkLevel(n, peak int64) rune {
	if n <= 0 || peak <= 0 {
		return bars[0]
	}
	top := int64(len(bars) - 1)
	return bars[min(top, 1+(top-1)*n/peak)]
}

// SparkLegend says how to read a sparkline whose full bar stands for at
// least floor messages, for a panel's title.
func SparkLegend(floor int64) string {
	return "bars: last 60 s, ▁ 0, █ the row's peak or " + Count(floor)
}

// DefaultFleet is the producer's sensors when it is not told otherwise.
const DefaultFleet = 10

// SparkFloor is the least a full bar stands for with a fleet of sensors:
// five intervals' messages, so a consumer one interval behind (a batch in
// hand, as it keeps up) draws low bars, not full ones. Without a fleet
// known yet, the producer's default fleet's: the first seconds' interval
// in flight looks as calm as every later one.
func SparkFloor(fleet int) int64 {
	if fleet <= 0 {
		fleet = DefaultFleet
	}
	return 5 * int64(fleet)
}

// Sparkline draws a fixed window of samples (one per second, oldest first)
// in cells bars of perCell samples each, the newest at the right edge: a
// bar is the largest known sample of its seconds, the rightmost the newest
// known sample (so it agrees with the value beside it), scaled to the
// window's peak (SparkLevel); a dot when none of them is known (-1), blank
// before the history starts. The window is cells×perCell samples whatever
// the history holds.
func Sparkline(samples []int64, cells, perCell int, floor int64) string {
	if cells <= 0 || perCell <= 0 {
		return ""
	}
	window := cells * perCell
	if len(samples) > window {
		samples = samples[len(samples)-window:]
	}
	peak := max(1, floor)
	for _, s := range samples {
		peak = max(peak, s)
	}
	// Left-pad with "no sample yet" so the newest is always on the right.
	pad := window - len(samples)
	var b strings.Builder
	for c := 0; c < cells; c++ {
		top, known, any := int64(0), false, false
		for k := c * perCell; k < (c+1)*perCell; k++ {
			if k < pad {
				continue
			}
			any = true
			if s := samples[k-pad]; s >= 0 {
				if c == cells-1 {
					top = s // the newest known, not the largest
				} else {
					top = max(top, s)
				}
				known = true
			}
		}
		switch {
		case !any:
			b.WriteRune(' ')
		case !known:
			b.WriteRune('·')
		default:
			b.WriteRune(SparkLevel(top, peak))
		}
	}
	return b.String()
}

// FitNumber formats v with two decimals, or fewer when that is too wide
// for width (totals of large values): exact where it fits, never cut.
func FitNumber(v float64, width int) string {
	for _, prec := range []int{2, 1, 0} {
		s := strconv.FormatFloat(math.Round(v*100)/100, 'f', prec, 64)
		if len(s) <= width || prec == 0 {
			return s
		}
	}
	return ""
}

// FitSigned2 is Signed2, with fewer decimals when that is too wide.
func FitSigned2(cents int64, width int) string {
	s := Signed2(cents)
	if len(s) <= width {
		return s
	}
	sign := ""
	if cents > 0 {
		sign = "+"
	}
	return sign + FitNumber(float64(cents)/100, width-len(sign))
}

// FitCount is Count when it fits width, else the count in thousands or
// millions, cut rather than rounded so it never says more than there is
// ("999.9k", "1.04M", "12.3M"): a number is never shown without its
// separators beside one shown with them.
func FitCount(n int64, width int) string {
	if s := Count(n); len(s) <= width {
		return s
	}
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}} {
		v := float64(n) / u.div
		for _, prec := range []int{2, 1, 0} {
			scale := math.Pow10(prec)
			cut := math.Trunc(v*scale) / scale
			if s := strconv.FormatFloat(cut, 'f', prec, 64) + u.suffix; len(s) <= width && math.Abs(v) < 1000 {
				return s
			}
		}
	}
	return Count(n)
}
