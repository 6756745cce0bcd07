#!/usr/bin/env bash
# The performance figures, each beside its reference or target, measured in
# one run, each the median of RUNS; a summary table of them ends the output:
#   - consumer-current's rebuild of a 1,000,000-record topic (the product's
#     JSON, 10 sensors, 3 partitions): from its launch to its caught_up
#     event, beside kcat reading the same topic from the same broker
#     (kcat -C -e -o beginning -q), and a 10,000-record rebuild (time and
#     peak RSS); on the embedded broker and on Apache Kafka (below); with
#     the CPU seconds of each, which load from other work moves less than
#     wall time;
#   - the headless dashboard's RSS with the topic at 1,000,000 records beside
#     10,000 (producer paused, consumers caught up, 20 s later);
#   - the dashboard's idle CPU per process, its librdkafka threads and its
#     crash-key latency (scripts/bench-dashboard.sh);
#   - what one attendee lab costs krl serve (scripts/bench-serve.sh 5);
#   - one GET /usage answer (the summaries) beside a scan of the same
#     records, at 1k/10k/100k usage records on the embedded store;
#   - consumer-usage's maximum sustained rate in each mode, and guarded at
#     1,000 msg/s for 5 minutes: lag and drift (scripts/bench-writer.sh);
#   - View() with 10 and 1,000 sensors.
#
#   scripts/bench.sh [RUNS [SECTION...]]   RUNS default 3; SECTIONs: replay
#       memory dashboard serve usage writer view (default: all; about 45
#       minutes)
#
# Apache Kafka for the rebuild: KAFKA_BROKER=HOST:PORT uses that broker
# (topics of their own, created by the fill); unset, a single node is
# started here (scripts/real-kafka.sh, on a free port, stopped at the end)
# when java is installed; KAFKA_BROKER=none leaves it out.
#
# Needs kcat (Debian package kcat; installed here when missing and apt-get
# can run).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
sections=${*:2}
sections=${sections:-replay memory dashboard serve usage writer view}
want() { [[ " $sections " == *" $1 "* ]]; }
records=${KRL_BENCH_RECORDS:-1000000}
small=10000
work=$(mktemp -d /tmp/krl-bench.XXXXXX)
bin=$work/krl
pids=() kafka_dir=""
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null
	[ -z "$kafka_dir" ] || scripts/real-kafka.sh stop "$kafka_dir" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

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
load() { cut -d' ' -f1 /proc/loadavg; }
tck=$(getconf CLK_TCK)
# fig FIGURE MEASURED TARGET: a row of the summary that ends the output.
fig() { printf '| %s | %s | %s |\n' "$1" "$2" "$3" >>"$work/summary"; }

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

# kcat_read ADDR TOPIC N: kcat reads the topic to its end; prints "seconds
# cpu_seconds" (kcat and the wc counting its lines).
kcat_read() {
	local got t
	t=$( { TIMEFORMAT='%R %U %S'; time kcat -C -b "$1" -t "$2" -e -o beginning -q -f '%o\n' | wc -l >"$work/kcat.n"; } 2>&1)
	got=$(cat "$work/kcat.n")
	[ "$got" = "$3" ] || { echo "kcat read $got records, want $3" >&2; exit 1; }
	awk -v t="$t" 'BEGIN {split(t, a, " "); printf "%.2f %.2f\n", a[1], a[2] + a[3]}'
}

# replay ADDR TOPIC N: consumer-current in a fresh group, from its launch
# to its caught_up event (the event's own time); prints "seconds
# peak_rss_mb cpu_seconds assigned_seconds anon_mb" (RSS is VmHWM; CPU and
# RssAnon as of caught_up, read within 10 ms of it; assigned: launch to its
# assigned event). RssAnon leaves out the binary's pages, which are most of
# the RSS and vary with the page cache (a binary just built maps some 15 MB
# more of itself than one copied).
replay() {
	local out=$work/replay.out pid line t0 ts tsa hwm cpu anon
	: >"$out"
	t0=$(date +%s.%N)
	"$bin" consumer current --brokers "$1" --topic "$2" --http 127.0.0.1:0 >"$out" 2>"$work/replay.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 6000); do
		line=$(grep -m1 '"event":"caught_up"' "$out" || true)
		[ -n "$line" ] && break
		sleep 0.01 # polling the status stream of a child process
	done
	cpu=$(awk -v hz="$tck" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
	hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
	anon=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	[ -n "$line" ] || { echo "consumer-current did not catch up in 60 s" >&2; tail "$work/replay.err" >&2; exit 1; }
	echo "$line" | grep -q "\"processed\":$3[,}]" || { echo "caught up with the wrong count: $line" >&2; exit 1; }
	ts=$(date -d "$(echo "$line" | sed 's/.*"ts":"\([^"]*\)".*/\1/')" +%s.%N)
	tsa=$(date -d "$(grep -m1 '"event":"assigned"' "$out" | sed 's/.*"ts":"\([^"]*\)".*/\1/')" +%s.%N)
	awk -v t0="$t0" -v ts="$ts" -v ta="$tsa" -v kb="$hwm" -v cpu="$cpu" -v an="$anon" 'BEGIN {printf "%.2f %.0f %.2f %.3f %.0f\n", ts-t0, kb/1024, cpu, ta-t0, an/1024}'
}

# replay_on NAME ADDR TOPIC TINY_ADDR TINY_TOPIC: the rebuild section on
# one broker: kcat, the 1M rebuild and the 10k rebuild, RUNS times in turn.
replay_on() {
	local name=$1 addr=$2 big=$3 tiny_addr=$4 tiny=$5 r k kc s1 m1 c1 a1 n1 s2 m2 c2 a2 n2 d
	d=$(mktemp -d "$work/replay.XXXXXX")
	fill "$addr" "$big" "$records"
	fill "$tiny_addr" "$tiny" "$small"
	for r in $(seq "$runs"); do
		read -r k kc < <(kcat_read "$addr" "$big" "$records")
		read -r s1 m1 c1 a1 n1 < <(replay "$addr" "$big" "$records")
		read -r s2 m2 c2 a2 n2 < <(replay "$tiny_addr" "$tiny" "$small")
		echo "run $r: kcat $k s (CPU $kc s) · consumer-current $s1 s (CPU $c1 s, assigned after $a1 s), peak RSS $m1 MB (anon $n1) · 10k: $s2 s, $m2 MB (anon $n2) · load $(load)"
		for v in k kc s1 m1 c1 a1 n1 s2 m2 n2; do echo "${!v}" >>"$d/$v"; done
	done
	k=$(median <"$d/k") kc=$(median <"$d/kc") s1=$(median <"$d/s1") m1=$(median <"$d/m1") c1=$(median <"$d/c1")
	a1=$(median <"$d/a1") s2=$(median <"$d/s2") m2=$(median <"$d/m2") n1=$(median <"$d/n1") n2=$(median <"$d/n2")
	awk -v n="$records" -v k="$k" -v kc="$kc" -v s="$s1" -v c="$c1" -v a="$a1" -v m1="$m1" -v m2="$m2" -v s2="$s2" -v sm="$small" -v n1="$n1" -v n2="$n2" 'BEGIN {
		printf "rebuild of %d records: consumer-current %.2f s (%.0fk msg/s, CPU %.2f s) vs kcat %.2f s (%.0fk msg/s, CPU %.2f s): %.2fx kcat'\''s time (target <= 1.00x); assigned %.2f s after launch\n", n, s, n/s/1000, c, k, n/k/1000, kc, s/k, a
		printf "peak RSS: %d MB at %d records vs %d MB at %d (%.2f s): %.2fx (target <= 1.2x); anonymous %d vs %d MB\n", m1, n, m2, sm, s2, m1/m2, n1, n2 }'
	fig "consumer-current, launch → caught_up, $((records / 1000))k records, vs kcat ($name)" \
		"$(awk -v s="$s1" -v k="$k" -v c="$c1" -v kc="$kc" 'BEGIN {printf "%.2f s vs %.2f s: %.2f× kcat'\''s time (CPU %.2f s vs %.2f s)", s, k, s/k, c, kc}')" "≤ 1.00×"
	fig "where that time goes ($name)" \
		"$(awk -v s="$s1" -v k="$k" -v a="$a1" -v n="$records" 'BEGIN {printf "assigned %.2f s after launch; %.0fk msg/s vs kcat'\''s %.0fk", a, n/(s-a)/1000, n/k/1000}')" "—"
	fig "consumer-current peak RSS, $((records / 1000))k vs 10k ($name)" \
		"$(awk -v a="$m1" -v b="$m2" -v x="$n1" -v y="$n2" 'BEGIN {printf "%d MB vs %d MB: %.2f× (anonymous %d vs %d MB)", a, b, a/b, x, y}')" "≤ 1.2×"
}

# kafka_broker: the Apache Kafka for the rebuild, in $kafka_addr ("" = none).
kafka_broker() {
	kafka_addr=${KAFKA_BROKER:-}
	[ "$kafka_addr" = none ] && { kafka_addr=""; return; }
	[ -n "$kafka_addr" ] && return
	command -v java >/dev/null || { echo "Apache Kafka: left out (no KAFKA_BROKER, no java)"; return; }
	local port
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 9000)) # the node's controller takes PORT+1
		python3 -c "import socket
for p in ($port, $port + 1): socket.socket().bind(('127.0.0.1', p))" 2>/dev/null && break
	done
	kafka_dir=$work/kafka
	echo "starting Apache Kafka (scripts/real-kafka.sh start $kafka_dir $port)"
	kafka_addr=$(scripts/real-kafka.sh start "$kafka_dir" "$port" 2>"$work/kafka.err" | tail -1) ||
		{ tail "$work/kafka.err" >&2; exit 1; }
}

echo "# scripts/bench.sh $*, $(date -u +%Y-%m-%d), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), median of $runs, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
if want replay; then
	echo
	echo "## consumer-current's rebuild vs kcat, embedded broker (kfake), one per topic"
	broker "$work/broker-1m" && addr=$broker_addr
	broker "$work/broker-10k" && tiny_addr=$broker_addr
	replay_on embedded "$addr" sensor-data "$tiny_addr" sensor-data
	kafka_broker
	if [ -n "$kafka_addr" ]; then
		echo
		echo "## the same on Apache Kafka ($kafka_addr), topics bench-1m-$$ and bench-10k-$$"
		replay_on "Apache Kafka" "$kafka_addr" "bench-1m-$$" "$kafka_addr" "bench-10k-$$"
	fi
	[ -z "$kafka_dir" ] || { scripts/real-kafka.sh stop "$kafka_dir" >/dev/null 2>&1 || true; kafka_dir=""; }
fi
# Everything else is measured on the embedded broker: the dashboard and the
# scripts below would take KAFKA_BROKER as their broker.
unset KAFKA_BROKER

# dashboard_rss ARGS...: the headless dashboard with ARGS, until its
# consumers caught up, the producer paused and 20 s more; prints its VmRSS
# in MB at the end of those 20 s (sampled every second).
dashboard_rss() {
	local dir pid kb="" last=""
	dir=$(mktemp -d "$work/dash.XXXXXX")
	printf 'wait-caught-up 5m\npause producer\nwait 20s\nquit\n' >"$dir/script.krl"
	"$bin" --headless --data-dir "$dir/run" --script "$dir/script.krl" "$@" >/dev/null 2>"$dir/err" &
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
	echo "## the dashboard's RSS, topic at $records records vs $small (headless, producer paused, embedded)"
	for r in $(seq "$runs"); do
		b=$(dashboard_rss --preload "$records")
		t=$(dashboard_rss --preload "$small")
		echo "run $r: $b MB at $records records, $t MB at $small · load $(load)"
		echo "$b" >>"$work/rb" && echo "$t" >>"$work/rt"
	done
	b=$(median <"$work/rb") t=$(median <"$work/rt")
	awk -v b="$b" -v t="$t" -v n="$records" -v m="$small" 'BEGIN {
		printf "dashboard RSS: %d MB at %d records vs %d MB at %d: %.2fx (target <= 1.5x)\n", b, n, t, m, b/t }'
	fig "dashboard RSS, topic at $((records / 1000))k records vs 10k (headless, producer paused)" \
		"$(awk -v b="$b" -v t="$t" 'BEGIN {printf "%d MB vs %d MB: %.2f×", b, t, b/t}')" "≤ 1.5×"
fi

if want dashboard; then
	echo
	echo "## the dashboard at 120x36 (scripts/bench-dashboard.sh $runs)"
	scripts/bench-dashboard.sh "$runs" | tee "$work/dashboard.out"
	# its medians: "  dashboard  1.9% of a core", "  rdk  0.0 librdkafka threads ..."
	dcpu=$(awk '$1 == "dashboard" {print $2 + 0}' "$work/dashboard.out")
	rdk=$(awk '$1 == "rdk" {print $2 + 0}' "$work/dashboard.out")
	keyx=$(awk '$1 == "keyx" {print $2 + 0}' "$work/dashboard.out")
	[ -n "$dcpu" ] && [ -n "$rdk" ] || { echo "bench-dashboard.sh printed no medians" >&2; exit 1; }
	fig "dashboard CPU, idle, every child at the default rate (30 s from /proc)" "${dcpu}% of a core" "≤ 2%"
	fig "librdkafka threads (rdk:*) in the dashboard process" "$rdk" "0"
	fig "x on consumer-usage → the screen says so" "${keyx} ms" "< 150 ms"
	# The same dashboard running a consumer-usage of the user's: the lab
	# reads its records itself (a scan a second) instead of the summaries.
	if [ -n "${KRL_PYTHON:-}" ]; then
		echo
		echo "## the same with your consumer: --usage-cmd examples/python/guarded.py ($KRL_PYTHON)"
		KRL_BENCH_ARGS="--usage-cmd '$KRL_PYTHON $PWD/examples/python/guarded.py'" scripts/bench-dashboard.sh "$runs" | tee "$work/dashboard-yours.out"
		ycpu=$(awk '$1 == "dashboard" {print $2 + 0}' "$work/dashboard-yours.out")
		fig "dashboard CPU, idle, with your consumer-usage (Python guarded)" "${ycpu}% of a core" "built-in: ${dcpu}%"
	else
		echo "KRL_PYTHON unset: the dashboard with your consumer is not measured"
	fi
fi

if want serve; then
	echo
	echo "## one attendee lab in krl serve (scripts/bench-serve.sh 5, $runs runs)"
	for r in $(seq "$runs"); do
		scripts/bench-serve.sh 5 >"$work/serve-$r.out" 2>&1 || { cat "$work/serve-$r.out"; exit 1; }
		# per lab: RSS MB, PSS MB, CPU %core, processes
		read -r rss pss cpu _ < <(awk '/^per lab / {print $3, $4, $5, $6}' "$work/serve-$r.out")
		labs=$(awk '/=> about/ {print $3}' "$work/serve-$r.out")
		[[ $pss =~ ^-?[0-9.]+$ && $cpu =~ ^-?[0-9.]+$ ]] ||
			{ echo "bench-serve.sh printed no 'per lab' line:" >&2; cat "$work/serve-$r.out" >&2; exit 1; }
		echo "run $r: per lab RSS $rss MB, PSS $pss MB, CPU $cpu% of a core; a 2-core 8 GB laptop: about $labs labs · load $(load)"
		echo "$rss" >>"$work/lr" && echo "$pss" >>"$work/lp" && echo "$cpu" >>"$work/lc" && echo "$labs" >>"$work/ll"
	done
	lr=$(median <"$work/lr") lp=$(median <"$work/lp") lc=$(median <"$work/lc") ll=$(median <"$work/ll")
	awk -v r="$lr" -v p="$lp" -v c="$lc" -v l="$ll" 'BEGIN {
		printf "per lab: PSS %.1f MB (RSS %.1f MB, each process counting the shared binary) (target <= 115 MB), CPU %.2f%% of a core (target <= 4.5%%); a laptop: about %d labs (target 20)\n", p, r, c, l }'
	echo "last run:"
	sed -n '/RSS MB *PSS MB/,$p' "$work/serve-$r.out"
	fig "one attendee lab in serve (bench-serve.sh 5): memory, CPU" "$(printf '%.1f MB PSS (%.1f MB RSS), %.2f%% of a core' "$lp" "$lr" "$lc")" "≤ 115 MB, ≤ 4.5%"
	fig "labs a 2-core 8 GB laptop serves" "$ll" "20"
fi

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

if [ -s "$work/summary" ]; then
	echo
	echo "## the figures beside their targets (median of $runs; load $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
	echo
	echo "| figure | measured | target |"
	echo "|---|---:|---:|"
	cat "$work/summary"
fi
