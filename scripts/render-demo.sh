#!/usr/bin/env bash
# Render demo.tape with VHS and check that the GIF plays in real time.
#
#   scripts/render-demo.sh [OUT_DIR]
#
# Writes OUT_DIR/demo.gif (default: a fresh directory under the temp dir; the
# path is printed) and OUT_DIR/timing.txt.
#
# VHS captures the terminal at the tape's frame rate only when the machine
# keeps up (on 2 busy cores it may manage a third of it) and writes every
# frame with the same delay, so its GIF can play several times too fast. The
# script keeps VHS's raw frames, whose files were written as they were
# captured, and rewrites the GIF's frame delays from their times
# (scripts/gifretime): each frame is shown as long as it was on screen.
# A Hide … Show inside the recording (the tape hides the dashboard's start)
# is a cut: it is shown as one frame interval. Then the script compares the
# GIF's length (ffprobe) with two clocks of the recording:
#   - the dashboard's own: how long it was on screen, which it logs as
#     on_screen_seconds in its run's logs/dashboard.log when it closes, less
#     the time the cuts left out;
#   - the tape's: the total of its Sleeps between Show and Hide.
# and fails (exit 1) when the GIF is more than 15% shorter than either.
#
# Needs on the PATH: vhs (or in $(go env GOPATH)/bin), ttyd, ffmpeg/ffprobe and
# a Chromium (chromium, chromium-browser or google-chrome). When ttyd is not on
# the PATH, the ttyd binary of ../shared/tools/ beside the repository is used
# (CI copies it there; it is read-only, so it is copied to run). As root, VHS
# needs VHS_NO_SANDBOX=true for Chromium; the script sets it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

out=${1:-}
if [ -z "$out" ]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/krl-demo.XXXXXX")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/krl-demo-work.XXXXXX")
# Kept when something fails, to look at; removed (with the dashboard's run
# directory and its 300,000 messages) otherwise.
trap 'rm -rf "$work"' EXIT

say() { printf 'render-demo: %s\n' "$*" >&2; }
fail() {
  say "$*"
  # VHS can leave its Chromium running when it fails (e.g. ttyd did not
  # start); it is the one whose profile is under $work.
  pkill -f -- "--user-data-dir=$work/" 2>/dev/null || true
  trap - EXIT
  say "kept for a look: $work"
  exit 1
}

vhs=$(command -v vhs || true)
if [ -z "$vhs" ] && [ -x "$(go env GOPATH)/bin/vhs" ]; then
  vhs=$(go env GOPATH)/bin/vhs
fi
[ -n "$vhs" ] || fail "vhs not found: go install github.com/charmbracelet/vhs@v0.10.0"
if ! command -v ttyd >/dev/null; then
  shared_ttyd="$root/../shared/tools/ttyd"
  [ -f "$shared_ttyd" ] || fail "ttyd not found on the PATH nor at $shared_ttyd"
  mkdir -p "$work/bin"
  cp "$shared_ttyd" "$work/bin/ttyd"
  chmod +x "$work/bin/ttyd"
  export PATH="$work/bin:$PATH"
fi
for tool in ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || fail "$tool not found (Debian: apt-get install ffmpeg)"
done
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null ||
  fail "no Chromium found (Debian: apt-get install chromium)"
if [ "$(id -u)" = 0 ]; then
  export VHS_NO_SANDBOX=true
fi

# The dashboard's run directory goes under TMPDIR: a private one, so its
# dashboard.log is found afterwards (and its 300,000 messages removed).
say "rendering demo.tape into $out/demo.gif ($("$vhs" --version 2>&1 | head -1), $(ttyd --version 2>&1 | head -1))"
# The tape as committed, plus an output that keeps the raw frames.
sed "s|^Output demo.gif\$|&\nOutput \"$work/frames.png\"|" demo.tape >"$work/demo.tape"
grep -qF "Output \"$work/frames.png\"" "$work/demo.tape" || fail "demo.tape has no 'Output demo.gif' line to add the frames output to"
start=$(date +%s)
KRL_DEMO_SIZE="$work/size" TMPDIR="$work" "$vhs" "$work/demo.tape" -o "$work/vhs.gif" >"$out/vhs.log" 2>&1 ||
  { tail -n 20 "$out/vhs.log" >&2; fail "vhs failed (log: $out/vhs.log)"; }
render_s=$(($(date +%s) - start))
# The tape's Width/Height are what give the dashboard its 120x36 layout with
# this font; another machine's fonts may measure differently.
term_size=$(cat "$work/size" 2>/dev/null || true)
[ "$term_size" = "36 120" ] || fail "the tape's terminal was '$term_size' rows and columns, not '36 120': adjust Set Width/Height in demo.tape"

duration() { ffprobe -v error -show_entries format=duration -of default=noprint_wrappers=1:nokey=1 "$1"; }
vhs_s=$(duration "$work/vhs.gif")
find "$work/frames.png" -name 'frame-text-*.png' -printf '%f %T@\n' | sort | cut -d' ' -f2 >"$work/times.txt"
# Every Show after the first one ends a cut.
cuts=$(awk '/^[[:space:]]*Show([[:space:]]|$)/ { n++ } END { print (n > 0 ? n - 1 : 0) }' demo.tape)
fps=$(awk '$1 == "Set" && $2 == "Framerate" { f = $3 } END { print (f ? f : 50) }' demo.tape)
go run ./scripts/gifretime -fps "$fps" -cuts "$cuts" "$work/vhs.gif" "$out/demo.gif" "$work/times.txt" >"$work/retime.txt" ||
  fail "cannot retime the GIF"
head -n -1 "$work/retime.txt" >&2
hidden_s=$(sed -n 's/^hidden_seconds=//p' "$work/retime.txt")
gif_s=$(duration "$out/demo.gif")
frames=$(wc -l <"$work/times.txt")
size=$(du -h "$out/demo.gif" | cut -f1)

logs=("$work"/krl-run-*/logs/dashboard.log)
[ -f "${logs[0]}" ] || fail "no dashboard.log under $work: did the tape start the dashboard?"
[ ${#logs[@]} -eq 1 ] || fail "more than one dashboard run under $work: ${logs[*]}"
cp "${logs[0]}" "$out/dashboard.log"
screen_s=$(sed -n 's/.*msg="dashboard closed".*on_screen_seconds=\([0-9.]*\).*/\1/p' "${logs[0]}" | tail -n 1)
[ -n "$screen_s" ] || fail "the dashboard did not log on_screen_seconds (it must be quit with q while the tape runs)"

# The tape's Sleeps while shown (VHS times: 500ms, 6s, 1.5, 1m).
sleep_s=$(awk '
  /^[[:space:]]*Hide([[:space:]]|$)/ { shown = 0 }
  /^[[:space:]]*Show([[:space:]]|$)/ { shown = 1 }
  shown && $1 == "Sleep" {
    v = $2
    if (v ~ /ms$/) { sub(/ms$/, "", v); t += v / 1000 }
    else if (v ~ /m$/) { sub(/m$/, "", v); t += v * 60 }
    else { sub(/s$/, "", v); t += v }
  }
  END { printf "%.1f", t }' demo.tape)

report=$(awk -v gif="$gif_s" -v screen="$screen_s" -v hidden="$hidden_s" -v sleeps="$sleep_s" -v frames="$frames" \
  -v render="$render_s" -v size="$size" -v vhs="$vhs_s" 'BEGIN {
  printf "rendered in %d s: %s, %d frames (%.1f/s), %.1f s long (VHS wrote them as %.1f s)\n", render, size, frames, frames / gif, gif, vhs
  screen -= hidden
  printf "dashboard on screen %.1f s while shown (%.1f s hidden): GIF/dashboard = %.2f\n", screen, hidden, gif / screen
  printf "tape Sleeps while shown %.1f s: GIF/Sleeps = %.2f\n", sleeps, gif / sleeps
  ok = gif >= 0.85 * screen && gif >= 0.85 * sleeps
  printf "%s\n", ok ? "real time: yes (within 15%)" : "real time: NO, the GIF is more than 15% shorter than what it recorded"
  exit ok ? 0 : 1 }') && ok=1 || ok=0
printf '%s\n' "$report" | tee "$out/timing.txt" >&2
say "GIF: $out/demo.gif"
[ "$ok" = 1 ] || exit 1
