#!/usr/bin/env bash
# A long session compressed (issue 11, item 5): the real dashboard at
# 120x36 in tmux, every child running, the producer at --interval 50ms for
# DURATION (6 minutes write what 2 hours write at the default 1 s). The
# screen is read 4 times a second; printed at the end:
#   - per panel (processes, sensors, usage), the longest time its content
#     did not change (target: every panel refreshes at least once a second);
#   - the dashboard's RSS every 30 s (target: flat);
#   - what the producer sent, and the usage verdicts on the last screen.
#
#   scripts/bench-long.sh [DURATION_S]   default 360
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-360}
work=$(mktemp -d /tmp/krl-bench-long.XXXXXX)
bin=$work/krl
sock=krl-bench-long-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$bin" ./tui

tmux -L "$sock" new-session -d -x 120 -y 36 "exec $bin --data-dir $work/run --interval 50ms"
dash=$(tmux -L "$sock" list-panes -F '#{pane_pid}')
echo "# scripts/bench-long.sh, $(date -u +%Y-%m-%d), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo): $duration s at --interval 50ms"
screens=$work/screens
: >"$screens"
start=$(date +%s.%N)
next_rss=0
while :; do
	now=$(date +%s.%N)
	elapsed=$(awk -v a="$start" -v b="$now" 'BEGIN {printf "%d", b-a}')
	[ "$elapsed" -ge "$duration" ] && break
	{
		echo "@@ $now"
		tmux -L "$sock" capture-pane -p -t 0
	} >>"$screens"
	if [ "$elapsed" -ge "$next_rss" ]; then
		echo "rss $elapsed $(awk '/^VmRSS/ {print $2}' "/proc/$dash/status")" >>"$work/rss"
		next_rss=$((next_rss + 30))
	fi
	sleep 0.25 # the sampling period of the screen
done
python3 - "$screens" "$work/rss" <<'EOF'
import re, sys
frames, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("@@ "):
        cur = [float(line[3:]), []]
        frames.append(cur)
    else:
        cur[1].append(line.rstrip("\n"))

def panel(lines, title):
    """The lines of the box whose top border carries title (left or right box on a row)."""
    for i, l in enumerate(lines):
        j = l.find("─ " + title)
        if j < 0:
            continue
        # Its corners, or the joints of the borders it shares.
        left = max(l.rfind(c, 0, j) for c in "╭├┬")
        right = min((k for k in (l.find(c, j) for c in "╮┤┬") if k >= 0), default=-1)
        out = []
        for row in lines[i + 1:]:
            seg = row[left:right + 1]
            if seg[:1] in ("╰", "├", "┴"):
                break
            out.append(seg)
        return "\n".join(out)
    return None

for title in ("Processes", "Sensors", "Usage"):
    last, since, worst, missing = None, None, 0.0, 0
    for t, lines in frames:
        p = panel(lines, title)
        if p is None:
            missing += 1
            continue
        if p != last:
            if since is not None:
                worst = max(worst, t - since)
            last, since = p, t
    print(f"{title:10s} longest without a change: {worst:.2f} s ({len(frames)} screens, {missing} without the panel)")
rss = [l.split() for l in open(sys.argv[2])]
print("dashboard RSS every 30 s (MB): " + " ".join(f"{int(kb) / 1024:.0f}" for _, _, kb in rss))
last = frames[-1][1]
sent = re.search(r"([\d,]+) sent", "\n".join(last))
print("producer sent:", sent.group(1) if sent else "?")
verdicts = [l.rstrip("│ ").split()[-1] for l in (panel(last, "Usage") or "").split("\n")
            if re.match(r"│(sensor-|total)", l)]
print("usage verdicts on the last screen:", {v: verdicts.count(v) for v in set(verdicts)})
print("last screen:")
print("\n".join(last))
EOF
