#!/usr/bin/env bash
# Rebalance times of consumer-usage with static and with dynamic membership
# (issue 12): two instances in one group on a 3-partition topic, producer
# running. For each membership, RUNS times:
#   - join: A owns every partition, B starts. "A revoke->assign" is how long
#     A owned nothing (its Revoked to its Assigned); "B start->assigned" is
#     from B's start to B owning its partition.
#   - restart: B is SIGKILLed and started again at once. "B kill->owning"
#     is from the kill to the restarted B's first Assigned with partitions;
#     "A revoked" says whether A's partitions were taken away meanwhile (a
#     rebalance it had to sit through).
# Embedded broker and store unless KAFKA_BROKER is set (then the store is
# still the embedded one).
#
#   scripts/bench-rebalance.sh [RUNS]   default 3
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
work=$(mktemp -d /tmp/krl-bench-rebalance.XXXXXX)
bin=$work/krl
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$bin" ./tui

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for FILE PATTERN SECONDS [FROM_LINE]: until a line of FILE (after FROM_LINE) matches.
wait_for() {
	for _ in $(seq $(($3 * 20))); do
		tail -n +"$((${4:-0} + 1))" "$1" 2>/dev/null | grep -q "$2" && return
		sleep 0.05 # polling a child's output
	done
	echo "no '$2' in $1 within $3 s" >&2
	tail -5 "$1" >&2
	exit 1
}
lines() { wc -l <"$1"; }
# event_ts FILE PATTERN FROM_LINE: the ts (epoch seconds) of the first event after FROM_LINE matching.
event_ts() {
	tail -n +"$(($3 + 1))" "$1" | grep -m1 "$2" | python3 -c 'import json,sys,datetime
ts=json.loads(sys.stdin.readline())["ts"].rstrip("Z")
whole,_,frac=ts.partition(".")
t=datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.timezone.utc).timestamp()
print(t+float("0."+(frac or "0")))'
}
now() { date +%s.%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f", (b-a)*1000}'; }

store_port=$(free_port)
"$bin" store --listen "127.0.0.1:$store_port" --data-dir "$work/store" >"$work/store.out" 2>&1 &
pids+=($!)
mongo=mongodb://127.0.0.1:$store_port/rebalance
topic=sensor-data-rebalance-$RANDOM
if [ -n "${KAFKA_BROKER:-}" ]; then
	brokers=$KAFKA_BROKER
	where="Apache Kafka at $brokers"
else
	port=$(free_port)
	"$bin" broker --listen "127.0.0.1:$port" --data-dir "$work/broker" >"$work/broker.out" 2>&1 &
	pids+=($!)
	brokers=127.0.0.1:$port
	where="embedded broker"
fi
# --preload creates the topic (3 partitions) and returns.
"$bin" producer --brokers "$brokers" --mongo "$mongo" --topic "$topic" --preload 30 >"$work/preload.out" 2>&1
"$bin" producer --brokers "$brokers" --mongo "$mongo" --topic "$topic" --interval 100ms >"$work/producer.out" 2>&1 &
pids+=($!)
wait_for "$work/producer.out" '"event":"progress"' 60

echo "# scripts/bench-rebalance.sh, $(date -u +%Y-%m-%d), $where, $(nproc) cores, $runs runs"
echo "# session.timeout.ms 6000 (kafkacfg.Usage); times in ms"
printf '%-8s %-4s %20s %20s %14s %10s\n' membership run "A revoke->assign" "B start->assigned" "B kill->owning" "A revoked"
for membership in static dynamic; do
	for run in $(seq "$runs"); do
		group=rebalance-$membership-$run-$RANDOM
		start_usage() { # NAME OUT
			"$bin" consumer usage --brokers "$brokers" --mongo "$mongo-$group" --topic "$topic" --mode guarded \
				--group "$group" --instance-id "$1" --membership "$membership" >>"$2" 2>>"$2.err" &
			last_pid=$!
			pids+=("$last_pid")
		}
		a=$work/$group-a.out b=$work/$group-b.out
		: >"$a"
		: >"$b"
		start_usage consumer-usage "$a"
		pid_a=$last_pid
		wait_for "$a" '"event":"assigned".*"partitions":\[0,1,2\]' 60
		from=$(lines "$a")
		t0=$(now)
		start_usage consumer-usage-2 "$b"
		pid_b=$last_pid
		wait_for "$b" '"event":"assigned"' 60
		wait_for "$a" '"event":"assigned"' 60 "$from"
		a_ms=$(tail -n +"$((from + 1))" "$a" | grep -m1 '"event":"assigned"' | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline()).get("millis",0))')
		b_ms=$(ms "$t0" "$(event_ts "$b" '"event":"assigned"' 0)")
		# Which instance has partition 2 (range: the second), and restart it.
		from_a=$(lines "$a")
		kill -9 "$pid_b"
		t1=$(now)
		wait "$pid_b" 2>/dev/null || true
		: >"$b"
		start_usage consumer-usage-2 "$b"
		pid_b=$last_pid
		# B owns partitions again (static: without a rebalance when it rejoins in time).
		wait_for "$b" '"event":"assigned".*"partitions":\[[0-9]' 120
		p2_ms=$(ms "$t1" "$(event_ts "$b" '"event":"assigned".*"partitions":\[[0-9]' 0)")
		revoked=no
		tail -n +"$((from_a + 1))" "$a" | grep -q '"event":"revoked"' && revoked=yes
		printf '%-8s %-4s %20s %20s %14s %10s\n' "$membership" "$run" "$a_ms" "$b_ms" "$p2_ms" "$revoked"
		kill "$pid_a" "$pid_b" 2>/dev/null || true
		wait "$pid_a" "$pid_b" 2>/dev/null || true
	done
done
