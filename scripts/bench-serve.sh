#!/usr/bin/env bash
# What one attendee lab costs the workshop server (krl serve): RSS and CPU of
# the server's whole process tree (the server, the shared broker and store,
# the presenter's lab, each attendee's producer and three consumers, the
# supervisors' watchdog shells):
#   - baseline: the server with no attendee, over 30 s after 20 s of settling;
#   - then N attendees connect with OpenSSH (a fresh ed25519 key each, so a lab
#     each) from a COLSxROWS terminal made by script(1) (bare ssh -tt without
#     a tty gets a 0x0 pty: the dashboard would draw nothing and its cost be
#     left out), or with SEAT=browser N browser seats (scripts/webseat: the
#     page's cookie and WebSocket, the page's size message, the screen read
#     and dropped; the browser's own cost is the attendee's laptop's); once
#     the table shows N labs connected with PROCS 4 and 20 s more, the same
#     figures over 60 s;
#   - per lab = (with N - baseline) / N, the server process's own RSS (its
#     in-process pollers and SSH sessions), RSS and CPU by role, and how many labs a
#     2-core 8 GB laptop would serve (the formula is printed);
#   - the per-lab figures beside the targets, one line:
#     targets: per-lab PSS P MB <= 115 met|MISSED · per-lab CPU C %core <= 4.5 met|MISSED · laptop N labs >= 20 met|MISSED
# RSS: sum of VmRSS of every process of the run, mean of 6 samples; it counts
# the one binary's pages once per process. PSS (smaps_rollup) shares each
# shared page among the processes that map it, so its sum is the memory the
# run really takes: the laptop formula uses it. CPU: % of
# one core from utime+stime deltas in /proc/PID/stat over the window. The
# run's processes are those with its KRL_BENCH_TAG in their environment (the
# server passes its environment on to every child).
#
#   [COLS=120 ROWS=36] [SEAT=ssh|browser] scripts/bench-serve.sh [N]   (default 5 labs; ~2.5 min)
#
# Needs go, ssh, ssh-keygen, script (util-linux). Stops and removes all it started.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N labs]" >&2; exit 2; }
base_s=30 settle_s=20 window_s=60 samples=6
tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/krl-bench-serve.XXXXXX)
tag=krl-bench-serve-$$-$RANDOM
srv="" cols=${COLS:-120} rows=${ROWS:-36} seat=${SEAT:-ssh}
[[ $seat == ssh || $seat == browser ]] || { echo "SEAT=$seat: want ssh or browser" >&2; exit 2; }

procs() { grep -lzx "KRL_BENCH_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }
clients() { grep -lzx "KRL_BENCH_CLIENT=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS:/ {k = $2} END {print k + 0}' "/proc/$1/status" 2>/dev/null || echo 0; }
pss_kb() { awk '/^Pss:/ {k = $2} END {print k + 0}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
alive() { [ -r "/proc/$1/stat" ] && awk '{exit $3 == "Z"}' "/proc/$1/stat" 2>/dev/null; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
last_table() { awk '/^  labs [0-9]+\// {t = ""} /^  / {t = t $0 "\n"} END {printf "%s", t}' "$work/serve.err"; }

cleanup() {
	set +e
	trap - EXIT INT TERM
	for p in $(clients); do kill "$p" 2>/dev/null; done
	exec 3>&-
	if [ -n "$srv" ] && alive "$srv"; then
		kill -TERM "$srv"
		for _ in $(seq 45); do alive "$srv" || break; sleep 1; done
		alive "$srv" && { echo "cleanup: server up 45 s after SIGTERM: SIGKILL"; kill -KILL -- "-$srv"; }
	fi
	wait 2>/dev/null
	for p in $(procs); do # each child has its own process group
		echo "cleanup: left after the server: $p: SIGKILL to its group"
		kill -KILL -- "-$(awk '{print $5}' "/proc/$p/stat" 2>/dev/null)" 2>/dev/null && sleep 1
	done
	left="$(procs) $(clients)"
	if [ -z "${left//[[:space:]]/}" ]; then echo "cleanup: no process of this run is left"; else echo "cleanup: STILL RUNNING:" $left; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# measure SECONDS: sets cpu (% of one core; a process born in the window
# counts from 0), rss and pss (MB, mean of the samples), own and ocpu (the server's
# own MB and CPU), np (processes at the end), roles (MB by role at the end),
# rolecpu (CPU by role over the window).
measure() {
	local p d sum=0 rsum=0 psum=0 osum=0 k began end by
	declare -A t0=() dt=()
	began=$(date +%s%N)
	for p in $(procs); do t0[$p]=$(ticks "$p"); done
	for ((k = 0; k < samples; k++)); do
		sleep $(($1 / samples))
		for p in $(procs); do rsum=$((rsum + $(rss_kb "$p"))) psum=$((psum + $(pss_kb "$p"))); done
		osum=$((osum + $(rss_kb "$srv")))
	done
	np=0 otk=$(($(ticks "$srv") - ${t0[$srv]:-0}))
	for p in $(procs); do d=$(($(ticks "$p") - ${t0[$p]:-0})) && dt[$p]=$d sum=$((sum + d)) np=$((np + 1)); done
	end=$(date +%s%N)
	ocpu=$(awk -v t=$otk -v hz="$tck" -v ns=$((end - began)) 'BEGIN {printf "%.1f", 100 * t / hz / (ns / 1e9)}')
	cpu=$(awk -v t=$sum -v hz="$tck" -v ns=$((end - began)) 'BEGIN {printf "%.1f", 100 * t / hz / (ns / 1e9)}')
	rss=$(awk -v k=$rsum -v s=$samples 'BEGIN {printf "%.0f", k / s / 1024}')
	pss=$(awk -v k=$psum -v s=$samples 'BEGIN {printf "%.0f", k / s / 1024}')
	own=$(awk -v k=$osum -v s=$samples 'BEGIN {printf "%.0f", k / s / 1024}')
	# by: one line per process: RSS kB, ticks in the window, its role
	by=$(for p in $(procs); do echo "$(rss_kb "$p") ${dt[$p]:-0} $(tr '\0\n' '  ' <"/proc/$p/cmdline" 2>/dev/null)"; done | awk '
		$4 == "serve" {r = "server"} $4 == "broker" || $4 == "store" {r = $4}
		$4 != "serve" && $4 != "broker" && $4 != "store" {r = /--topic sensor-data-/ ? "attendee-labs" : "presenter-lab"}
		$3 ~ /sh$/ {r = "watchdogs"} {print $1, $2, r}')
	roles=$(awk '{kb[$3] += $1} END {for (r in kb) {n = r; sub("-", " ", n); printf "%s %.0f · ", n, kb[r] / 1024}}' <<<"$by")
	rolecpu=$(awk -v hz="$tck" -v ns=$((end - began)) '{t[$3] += $2}
		END {for (r in t) {n = r; sub("-", " ", n); printf "%s %.1f · ", n, 100 * t[r] / hz / (ns / 1e9)}}' <<<"$by")
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), load $(load) (start)"
go build -o "$work/krl" ./tui
web=()
if [ "$seat" = browser ]; then
	go build -o "$work/webseat" ./scripts/webseat
	web=(--http 127.0.0.1:0)
fi
KRL_BENCH_TAG=$tag setsid "$work/krl" serve --headless --ssh 127.0.0.1:0 --data-dir "$work/data" \
	--max-labs $((n + 5)) --keep 10m --auth open "${web[@]}" 2>"$work/serve.err" &
srv=$!
port=""
for _ in $(seq 180); do
	port=$(sed -n 's/^attendees: *ssh -p \([0-9]*\) .*/\1/p' "$work/serve.err")
	[ -n "$port" ] || ! alive "$srv" && break
	sleep 1
done
[ -n "$port" ] || { echo "the server did not listen; its stderr:"; tail -20 "$work/serve.err"; exit 1; }
echo "server pid $srv on 127.0.0.1:$port; settling ${settle_s}s, baseline over ${base_s}s"
sleep "$settle_s"
measure "$base_s"
b_cpu=$cpu b_rss=$rss b_pss=$pss b_own=$own b_ocpu=$ocpu b_np=$np b_roles=$roles b_rolecpu=$rolecpu

page=$(sed -n 's/^browser: *\(http[^ ]*\)$/\1/p' "$work/serve.err")
mkfifo "$work/in"
exec 3<>"$work/in" # held open: the clients' stdin never ends
for i in $(seq "$n"); do
	if [ "$seat" = browser ]; then
		KRL_BENCH_CLIENT=$tag "$work/webseat" -url "$page" -cols "$cols" -rows "$rows" 2>"$work/web$i.err" &
		continue
	fi
	ssh-keygen -q -t ed25519 -N '' -f "$work/key$i"
	KRL_BENCH_CLIENT=$tag script -qfec "stty cols $cols rows $rows; exec ssh -tt -p $port -i $work/key$i -F /dev/null \
		-o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
		127.0.0.1 2>$work/ssh$i.err" /dev/null <"$work/in" >/dev/null 2>&1 &
done
# ready: the last table printed has N rows connected with PROCS (column 6:
# LAB SEAT KEY STATE UPTIME PROCS) 4.
ready() { last_table | awk -v n="$n" '$4 == "connected" && $6 == 4 {ok++} END {exit !(ok >= n)}'; }
began=$(date +%s)
until ready; do
	if [ $(($(date +%s) - began)) -ge 180 ] || ! alive "$srv"; then
		echo "labs not all connected with 4 processes after $(($(date +%s) - began)) s; last table and logs:"
		last_table
		tail -n 15 "$work/data/serve.log" "$work"/data/labs/*/logs/*.log "$work"/ssh*.err "$work"/web*.err 2>/dev/null
		exit 1
	fi
	sleep 1
done
echo "$n labs ($seat seats at ${cols}x${rows}) connected with 4 processes each within $(($(date +%s) - began)) s; settling ${settle_s}s, measuring over ${window_s}s"
sleep "$settle_s"
measure "$window_s"
last_table

awk -v n="$n" -v bc="$b_cpu" -v br="$b_rss" -v bp="$b_pss" -v bo="$b_own" -v boc="$b_ocpu" -v bn="$b_np" \
	-v wc="$cpu" -v wr="$rss" -v wp="$pss" -v wo="$own" -v woc="$ocpu" -v wn="$np" 'BEGIN {
	pr = (wr - br) / n; pp = (wp - bp) / n; pc = (wc - bc) / n
	printf "\n%-26s %8s %8s %10s %6s\n", "", "RSS MB", "PSS MB", "CPU %core", "procs"
	printf "%-26s %8.0f %8.0f %10.1f %6d\n", "baseline (no attendee)", br, bp, bc, bn
	printf "%-26s %8.0f %8.0f %10.1f %6d\n", "with " n " labs", wr, wp, wc, wn
	printf "%-26s %8.1f %8.1f %10.2f %6.1f\n", "per lab", pr, pp, pc, (wn - bn) / n
	printf "server process alone: %.0f -> %.0f MB, %.1f -> %.1f %%core with %d labs: %.1f MB, %.2f %%core per lab in-process\n",
		bo, wo, boc, woc, n, (wo - bo) / n, (woc - boc) / n
	printf "\nlaptop (2 cores, 8 GB): labs = min((8192 - baseline PSS MB - 1024 MB OS) / per-lab PSS MB,\n"
	printf "                                  (200%% x 0.5 - baseline CPU%%) / per-lab CPU%%)\n"
	m = (pp > 0) ? int((8192 - bp - 1024) / pp) : -1; c = (pc > 0) ? int((100 - bc) / pc) : -1
	printf "  memory: (8192 - %.0f - 1024) / %.1f = %s\n", bp, pp, m < 0 ? "n/a" : m
	printf "  cpu:    (200 x 0.5 - %.1f) / %.2f = %s\n", bc, pc, c < 0 ? "n/a" : c
	e = (m < 0) ? c : (c < 0) ? m : (m < c ? m : c)
	printf "  => about %s labs\n", e < 0 ? "n/a" : e
	printf "targets: per-lab PSS %.1f MB <= 115 %s · per-lab CPU %.2f %%core <= 4.5 %s · laptop %s labs >= 20 %s\n",
		pp, (pp <= 115 ? "met" : "MISSED"), pc, (pc <= 4.5 ? "met" : "MISSED"), (e < 0 ? "n/a" : e), (e >= 20 ? "met" : "MISSED")
}'
echo "RSS MB by role, baseline:     ${b_roles% · }"
echo "RSS MB by role, with $n labs: ${roles% · }"
echo "CPU %core by role, baseline:     ${b_rolecpu% · }"
echo "CPU %core by role, with $n labs: ${rolecpu% · }"
echo "load $(load) (end)"
