#!/usr/bin/env bash
# What the dashboard costs and how fast it answers (issue 11): the real
# dashboard at 120x36 in tmux with every child at the default rate,
#   - each process's CPU, read from /proc over a window after a warm-up
#     (target: the dashboard ≤ 2% of a core when nobody touches it);
#   - the dashboard's RSS at the window's start and end, and its
#     librdkafka threads (rdk:* in /proc/PID/task; target 0);
#   - the time from the start to all six rows running on screen (keep ≤ 2 s);
#   - then x on consumer-usage: the time from the key to the screen saying
#     so (target < 150 ms), and to the row showing it crashed.
#
#   scripts/bench-dashboard.sh [RUNS] [WINDOW_S] [WARMUP_S]   (defaults 3 30 20)
#
# KRL_BENCH_ARGS adds dashboard flags: '--usage-cmd "python3 g.py"' measures
# the dashboard with a consumer-usage of the user's (its rows: "yours").
#
# Each run starts a fresh lab (embedded broker and store). Prints each run
# and the median of the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3} window=${2:-30} warmup=${3:-20}
tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/krl-bench-dashboard.XXXXXX)
bin=$work/krl
go build -o "$bin" ./tui
sock=krl-bench-dashboard-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# role names a child by its arguments: "consumer usage" -> consumer-usage;
# a program other than this binary (--usage-cmd) is "yours".
role() {
	tr '\0' ' ' <"/proc/$1/cmdline" | awk -v bin="$bin" '{
		if ($1 != bin) print "yours"; else if ($2 == "consumer") print "consumer-" $3; else print $2 }'
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "window ${window}s after ${warmup}s of warm-up, $runs runs, % of one core"
results=$work/results
for run in $(seq "$runs"); do
	tmux -L "$sock" kill-server 2>/dev/null || true
	began=$(date +%s%N) running=""
	tmux -L "$sock" new-session -d -x 120 -y 36 "exec $bin --data-dir $work/run-$run ${KRL_BENCH_ARGS:-}"
	# Start -> all six process rows "running" on screen.
	while [ -z "$running" ] && [ $(($(date +%s%N) - began)) -lt 30000000000 ]; do
		rows=$(tmux -L "$sock" capture-pane -p 2>/dev/null | grep -cE '^│[ ▸] [1-6] [a-z-]+ +[A-Za-z .+-]+ running ' || true)
		[ "$rows" = 6 ] && running=$((($(date +%s%N) - began) / 1000000))
	done
	echo "run $run: all six rows running on screen ${running:-?} ms after the start"
	echo "startup ${running:-999999}" >>"$results"
	sleep "$warmup" # steady state is what is measured
	dash=$(tmux -L "$sock" list-panes -F '#{pane_pid}')
	declare -A t0=() name=()
	# The dashboard's children are the six roles and a watchdog shell
	# (it ends them if the dashboard dies); the roles are what is measured.
	pids=$dash
	for p in $(pgrep -P "$dash"); do
		case $(role "$p") in broker | store | producer | consumer-* | yours) pids+=" $p" ;; esac
	done
	for p in $pids; do
		t0[$p]=$(ticks "$p")
		name[$p]=$([ "$p" = "$dash" ] && echo dashboard || role "$p")
	done
	rss0=$(rss_kb "$dash")
	sleep "$window"
	rss1=$(rss_kb "$dash")
	# librdkafka names its threads rdk:*: a count above 0 means the
	# dashboard holds a librdkafka handle (target 0: it observes through
	# franz-go).
	rdk=$(cat /proc/"$dash"/task/*/comm 2>/dev/null | grep -c '^rdk:' || true)
	threads=$(ls /proc/"$dash"/task | wc -l)
	echo "rdk ${rdk}" >>"$results"
	echo "run $run: dashboard threads $threads, librdkafka (rdk:*) $rdk (target 0)"
	line="run $run:"
	for p in $pids; do
		pct=$(awk -v a="${t0[$p]}" -v b="$(ticks "$p")" -v hz="$tck" -v w="$window" 'BEGIN {printf "%.1f", (b-a)/hz/w*100}')
		echo "${name[$p]} $pct" >>"$results"
		line+=" ${name[$p]} ${pct}%"
	done
	echo "$line · dashboard RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MB"
	# x on consumer-usage (3 selects it): poll the screen until it shows
	# the key's effect, then the crash.
	tmux -L "$sock" send-keys 3
	sleep 0.5
	start=$(date +%s%N) seen="" crashed=""
	tmux -L "$sock" send-keys x
	while [ -z "$crashed" ] && [ $(($(date +%s%N) - start)) -lt 5000000000 ]; do
		screen=$(tmux -L "$sock" capture-pane -p)
		now=$(date +%s%N)
		if [ -z "$seen" ] && grep -q 'crashing\|crashed' <<<"$screen"; then seen=$(((now - start) / 1000000)); fi
		if grep -q 'crashed (SIGKILL)' <<<"$screen"; then crashed=$(((now - start) / 1000000)); fi
	done
	echo "key x on consumer-usage run $run: on screen after ${seen:-?} ms, row crashed after ${crashed:-?} ms"
	echo "keyx ${seen:-999999}" >>"$results"
	tmux -L "$sock" send-keys q
	for _ in $(seq 100); do tmux -L "$sock" has-session 2>/dev/null || break; sleep 0.1; done
	unset t0 name
done
echo "median of $runs runs:"
sort -k1,1 -k2,2n "$results" | awk '{v[$1, ++n[$1]] = $2} END {
	for (k in n) { m = n[k]; printf "  %-16s %5.1f%s\n", k, (m % 2) ? v[k, (m+1)/2] : (v[k, m/2] + v[k, m/2+1]) / 2, (k == "keyx") ? " ms from x to the screen" : (k == "startup") ? " ms from the start to six rows running" : (k == "rdk") ? " librdkafka threads in the dashboard (target 0)" : (k == "dashboard") ? "% of a core (target ≤ 2%)" : "% of a core" } }' | sort
