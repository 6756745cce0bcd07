#!/usr/bin/env bash
# Issue 11's figures, each next to its reference, measured in one run:
#   - consumer-current's replay of a 1,000,000-record topic (the product's
#     JSON, 10 sensors, 3 partitions) to caught_up, beside kcat reading the
#     same topic from the same broker, and beside a 10,000-record replay
#     (time and peak RSS);
#   - one GET /usage answer (the summaries) beside a scan of the same
#     records, at 1k/10k/100k usage records on the embedded store;
#   - consumer-usage's maximum sustained rate in each mode, and guarded at
#     1,000 msg/s for 5 minutes: lag and drift (scripts/bench-writer.sh);
#   - View() with 10 and 1,000 sensors;
#   - the dashboard's idle CPU per process and its crash-key latency
#     (scripts/bench-dashboard.sh);
#   - the headless dashboard's RSS with the topic at 1,000,000 records beside
#     10,000 (producer paused, consumers caught up, 20 s later);
#   - what one attendee lab costs tui serve (scripts/bench-serve.sh 5).
#
#   scripts/bench.sh [RUNS [SECTION...]]   RUNS default 3 (each figure is the
#       median); SECTIONs: replay memory usage writer view dashboard serve
#       (default: all; about 35 minutes)
#
# With KAFKA_BROKER set, the replay and memory sections run against that
# broker (topics of their own, created by the fill) and the script stops after
# them: the other sections do not depend on the broker.
#
# Needs kcat (Debian package kcat; installed here when missing and apt-get
# can run).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
sections=${*:2}
sections=${sections:-replay memory usage writer view dashboard serve}
want() { [[ " $sections " == *" $1 "* ]]; }
records=${KRL_BENCH_RECORDS:-1000000}
small=10000
work=$(mktemp -d /tmp/krl-bench.XXXXXX)
bin=$work/krl
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT

if ! command -v kcat >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -q kcat >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q kcat >/dev/null; }
	else
		sudo -n apt-get install -y -q kcat >/dev/null
	fi
fi
go build -o "$bin" ./tui

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# broker DIR: an embedded broker on a free port, its address in $broker_addr
# (not a command substitution: the broker must stay this shell's child).
broker() {
	local port
	port=$(free_port)
	"$bin" broker --listen "127.0.0.1:$port" --data-dir "$1" >"$1.out" 2>"$1.err" &
	pids+=($!)
	broker_addr=127.0.0.1:$port
	for _ in $(seq 300); do
		kcat -L -b "$broker_addr" -t sensor-data -m 1 >/dev/null 2>&1 && return
		sleep 0.1 # waiting for a listener
	done
	echo "the embedded broker did not answer in 30 s" >&2
	exit 1
}

# fill ADDR TOPIC N: N records of the producer's own shape, 10 sensors.
fill() {
	local t0 t1
	t0=$(date +%s.%N)
	"$bin" producer --brokers "$1" --topic "$2" --preload "$3" --sensors 10 --http "" >/dev/null 2>"$work/fill.err" ||
		{ cat "$work/fill.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v n="$3" 'BEGIN {printf "filled %d records in %.1f s\n", n, b-a}'
}

# kcat_read ADDR TOPIC N: seconds for kcat to read the topic to its end.
kcat_read() {
	local t0 t1 got
	t0=$(date +%s.%N)
	got=$(kcat -C -b "$1" -t "$2" -e -o beginning -q -f '%o\n' | wc -l)
	t1=$(date +%s.%N)
	[ "$got" = "$3" ] || { echo "kcat read $got records, want $3" >&2; exit 1; }
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b-a}'
}

# replay ADDR TOPIC N: consumer-current in a fresh group, to caught_up;
# prints "seconds peak_rss_mb" (seconds as consumer-current reports them,
# from its start; RSS is VmHWM of the process).
replay() {
	local out=$work/replay.out pid line ms hwm
	: >"$out"
	"$bin" consumer current --brokers "$1" --topic "$2" --http 127.0.0.1:0 >"$out" 2>"$work/replay.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 1200); do
		line=$(grep -m1 '"event":"caught_up"' "$out" || true)
		[ -n "$line" ] && break
		sleep 0.05 # polling the status stream of a child process
	done
	hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	[ -n "$line" ] || { echo "consumer-current did not catch up in 60 s" >&2; tail "$work/replay.err" >&2; exit 1; }
	echo "$line" | grep -q "\"processed\":$3[,}]" || { echo "caught up with the wrong count: $line" >&2; exit 1; }
	ms=$(echo "$line" | sed 's/.*"millis":\([0-9]*\).*/\1/')
	awk -v ms="$ms" -v kb="$hwm" 'BEGIN {printf "%.2f %.0f\n", ms/1000, kb/1024}'
}

echo "# scripts/bench.sh, $(date -u +%Y-%m-%d), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), median of $runs"
if want replay; then
echo
echo "## consumer-current's replay vs kcat"
if [ -n "${KAFKA_BROKER:-}" ]; then
	# The fill creates the topics (3 partitions), fresh ones each run.
	addr=$KAFKA_BROKER tiny_addr=$KAFKA_BROKER
	big=bench-1m-$$ tiny=bench-10k-$$
	echo "broker: $KAFKA_BROKER (KAFKA_BROKER), topics $big and $tiny"
else
	broker "$work/broker-1m" && addr=$broker_addr big=sensor-data
	broker "$work/broker-10k" && tiny_addr=$broker_addr tiny=sensor-data
	echo "broker: embedded (kfake), one per topic"
fi
fill "$addr" "$big" "$records"
fill "$tiny_addr" "$tiny" "$small"

for r in $(seq "$runs"); do
	k=$(kcat_read "$addr" "$big" "$records")
	read -r s1 m1 < <(replay "$addr" "$big" "$records")
	read -r s2 m2 < <(replay "$tiny_addr" "$tiny" "$small")
	echo "run $r: kcat $k s · consumer-current ${s1} s, peak RSS ${m1} MB · 10k replay ${s2} s, ${m2} MB"
	echo "$k" >>"$work/kcat" && echo "$s1" >>"$work/s1" && echo "$m1" >>"$work/m1" && echo "$s2" >>"$work/s2" && echo "$m2" >>"$work/m2"
done
k=$(median <"$work/kcat") s1=$(median <"$work/s1") m1=$(median <"$work/m1") s2=$(median <"$work/s2") m2=$(median <"$work/m2")
awk -v n="$records" -v k="$k" -v s="$s1" -v m1="$m1" -v m2="$m2" -v s2="$s2" 'BEGIN {
	printf "replay of %d records: consumer-current %.2f s (%.0fk msg/s) vs kcat %.2f s (%.0fk msg/s): %.2fx kcat'\''s time (target <= 1.00x)\n", n, s, n/s/1000, k, n/k/1000, s/k
	printf "peak RSS: %d MB at %d records vs %d MB at 10k (%.2f s): %.2fx (target <= 1.2x)\n", m1, n, m2, s2, m1/m2 }'
fi

# dashboard_rss TOPIC ARGS...: the headless dashboard on TOPIC with ARGS,
# until its consumers caught up, the producer paused and 20 s more; prints
# its VmRSS in MB at the end of those 20 s (sampled every second).
dashboard_rss() {
	local topic=$1 dir pid kb="" last=""
	shift
	dir=$(mktemp -d "$work/dash.XXXXXX")
	printf 'wait-caught-up 5m\npause producer\nwait 20s\nquit\n' >"$dir/script.krl"
	"$bin" --headless --data-dir "$dir/run" --topic "$topic" --script "$dir/script.krl" "$@" \
		>/dev/null 2>"$dir/err" &
	pid=$!
	pids+=("$pid")
	while kill -0 "$pid" 2>/dev/null; do
		kb=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$kb" ] && last=$kb
		sleep 1 # sampling the process's RSS
	done
	wait "$pid" || { echo "the headless dashboard failed:" >&2; tail "$dir/err" >&2; exit 1; }
	awk -v kb="$last" 'BEGIN {printf "%.0f\n", kb/1024}'
}

if want memory; then
	echo
	echo "## the dashboard's RSS, topic at $records records vs $small (headless, producer paused)"
	for r in $(seq "$runs"); do
		if [ -n "${KAFKA_BROKER:-}" ]; then
			big=bench-mem-1m-$$-$r tiny=bench-mem-10k-$$-$r
			fill "$KAFKA_BROKER" "$big" "$records" >/dev/null
			fill "$KAFKA_BROKER" "$tiny" "$small" >/dev/null
			b=$(dashboard_rss "$big" --brokers "$KAFKA_BROKER" --usage-group "bench-mem-$$-$r-big")
			t=$(dashboard_rss "$tiny" --brokers "$KAFKA_BROKER" --usage-group "bench-mem-$$-$r-tiny")
		else
			b=$(dashboard_rss sensor-data --preload "$records")
			t=$(dashboard_rss sensor-data --preload "$small")
		fi
		echo "run $r: $b MB at $records records, $t MB at $small"
		echo "$b" >>"$work/rb" && echo "$t" >>"$work/rt"
	done
	b=$(median <"$work/rb") t=$(median <"$work/rt")
	awk -v b="$b" -v t="$t" -v n="$records" -v m="$small" 'BEGIN {
		printf "dashboard RSS: %d MB at %d records vs %d MB at %d: %.2fx (target <= 1.5x)\n", b, n, t, m, b/t }'
fi
[ -n "${KAFKA_BROKER:-}" ] && exit 0

if want usage; then
	echo
	echo "## GET /usage on the embedded store: the summaries vs a scan of the same records (ns/op)"
	go test ./internal/store -run '^$' -bench UsageCoverage -benchtime "${runs}x" | grep '^Benchmark'
fi
if want writer; then
	echo
	echo "## consumer-usage's write rate (scripts/bench-writer.sh $runs)"
	scripts/bench-writer.sh "$runs" 2>&1 | grep -v 'level=INFO' | tail -n +2
fi
if want view; then
	echo
	echo "## View() (ns/op)"
	go test ./tui/ui -run '^$' -bench View -count "$runs" | grep '^Benchmark'
fi
if want dashboard; then
	echo
	echo "## the dashboard at 120x36 (scripts/bench-dashboard.sh $runs)"
	scripts/bench-dashboard.sh "$runs"
fi
if want serve; then
	echo
	echo "## one attendee lab in tui serve (scripts/bench-serve.sh 5, $runs runs)"
	for r in $(seq "$runs"); do
		scripts/bench-serve.sh 5 >"$work/serve-$r.out" 2>&1 || { cat "$work/serve-$r.out"; exit 1; }
		# per lab: RSS MB, PSS MB, CPU %core, processes
		read -r rss pss cpu _ < <(awk '/^per lab / {print $3, $4, $5, $6}' "$work/serve-$r.out")
		labs=$(awk '/=> about/ {print $3}' "$work/serve-$r.out")
		echo "run $r: per lab RSS $rss MB, PSS $pss MB, CPU $cpu% of a core; a 2-core 8 GB laptop: about $labs labs"
		echo "$rss" >>"$work/lr" && echo "$pss" >>"$work/lp" && echo "$cpu" >>"$work/lc" && echo "$labs" >>"$work/ll"
	done
	awk -v r="$(median <"$work/lr")" -v p="$(median <"$work/lp")" -v c="$(median <"$work/lc")" -v l="$(median <"$work/ll")" 'BEGIN {
		printf "per lab: PSS %.1f MB (RSS %.1f MB, each process counting the shared binary) (target <= 115 MB), CPU %.2f%% of a core (target <= 4.5%%); a laptop: about %d labs (target 20)\n", p, r, c, l }'
	echo "last run:"
	sed -n '/RSS MB *PSS MB/,$p' "$work/serve-$r.out"
fi
