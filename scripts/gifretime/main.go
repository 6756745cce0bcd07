// Command gifretime sets a GIF's frame delays from the times its frames were
// captured. VHS captures the terminal at the tape's frame rate when the
// machine keeps up, and more slowly when it does not, but lays the captures
// out one frame interval apart: on a loaded machine its GIF plays faster
// than what it recorded. scripts/render-demo.sh keeps VHS's raw frames
// (whose files were written as they were captured) and passes their times
// here, so each moment is shown for as long as it was on screen.
//
//	go run ./scripts/gifretime -fps F -cuts N IN.gif OUT.gif TIMES
//
// TIMES holds the capture time of each raw frame, in order, in seconds (e.g.
// from find -printf '%T@'). In VHS's GIF, raw frame k is at k/F seconds (F:
// the tape's frame rate); the GIF's own frame rate may differ (ffmpeg
// resamples), so a GIF frame at VHS time v is moved to the capture time
// interpolated at raw frame v*F.
//
// A Hide … Show inside the recording leaves a gap in the capture times: the
// N largest gaps are such cuts and last one median interval. The last line
// of output is "hidden_seconds=S", the time the cuts left out.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"image/gif"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	fps := flag.Float64("fps", 50, "the tape's frame rate (Set Framerate; VHS's default is 50)")
	cuts := flag.Int("cuts", 0, "Hide … Show cuts inside the recording")
	flag.Parse()
	if flag.NArg() != 3 || *cuts < 0 || *fps <= 0 {
		fmt.Fprintln(os.Stderr, "usage: gifretime [-fps F] [-cuts N] IN.gif OUT.gif TIMES")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), flag.Arg(2), *fps, *cuts); err != nil {
		fmt.Fprintln(os.Stderr, "gifretime:", err)
		os.Exit(1)
	}
}

func run(in, out, timesPath string, fps float64, cuts int) error {
	times, err := readTimes(timesPath)
	if err != nil {
		return err
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	g, err := gif.DecodeAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	before := total(g.Delay)
	shown, median, hidden, err := timeline(times, cuts)
	if err != nil {
		return err
	}
	retime(g.Delay, shown, median, fps)
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := gif.EncodeAll(w, g); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Printf("%d raw frames in %d GIF frames: %.1f s as VHS wrote them, %.1f s as it happened (%d cut(s) leaving out %.1f s)\n",
		len(times), len(g.Image), before, total(g.Delay), cuts, hidden)
	fmt.Printf("hidden_seconds=%.1f\n", hidden)
	return nil
}

func readTimes(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var times []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		t, err := strconv.ParseFloat(strings.Fields(line)[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		times = append(times, t)
	}
	return times, sc.Err()
}

// timeline turns capture times into the times the raw frames are shown at
// (seconds from the first), with the cuts largest gaps shortened to the
// median interval; hidden is the time they left out.
func timeline(times []float64, cuts int) (shown []float64, median, hidden float64, err error) {
	if len(times) < cuts+2 {
		return nil, 0, 0, fmt.Errorf("%d raw frames: too few for %d cut(s)", len(times), cuts)
	}
	gaps := make([]float64, len(times)-1)
	for i := range gaps {
		if times[i+1] < times[i] {
			return nil, 0, 0, fmt.Errorf("capture time %d (%.3f) is before the one before it (%.3f)", i+1, times[i+1], times[i])
		}
		gaps[i] = times[i+1] - times[i]
	}
	byLength := make([]int, len(gaps))
	for i := range byLength {
		byLength[i] = i
	}
	slices.SortStableFunc(byLength, func(a, b int) int { return cmp.Compare(gaps[b], gaps[a]) })
	median = gaps[byLength[cuts+(len(gaps)-cuts)/2]]
	for _, i := range byLength[:cuts] {
		hidden += gaps[i] - median
		gaps[i] = median
	}
	shown = make([]float64, len(times))
	for i, gap := range gaps {
		shown[i+1] = shown[i] + gap
	}
	return shown, median, hidden, nil
}

// minDelay: browsers show a GIF delay of 0 or 1 centisecond as 10.
const minDelay = 2

// retime rewrites delays (centiseconds; delays[j] is how long GIF frame j
// shows): GIF frame j, at VHS time v, moves to the shown time of raw frame
// v*fps (interpolated; past the last raw frame, one median interval per
// raw frame). The running total is rounded, not each delay, so the length
// does not drift.
func retime(delays []int, shown []float64, median, fps float64) {
	last := len(shown) - 1
	at := func(v float64) float64 {
		k := v * fps
		if k >= float64(last) {
			return shown[last] + (k-float64(last))*median
		}
		i := int(k)
		return shown[i] + (k-float64(i))*(shown[i+1]-shown[i])
	}
	starts := make([]float64, len(delays)+1) // VHS times
	for j, d := range delays {
		starts[j+1] = starts[j] + float64(d)/100
	}
	cs := func(j int) int { return int(math.Round(at(starts[j]) * 100)) }
	for j := range delays {
		delays[j] = max(minDelay, cs(j+1)-cs(j))
	}
}

func total(delays []int) float64 {
	s := 0
	for _, d := range delays {
		s += d
	}
	return float64(s) / 100
}
