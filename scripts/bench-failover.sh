#!/usr/bin/env bash
# Failover times of the cluster lesson (issue 13), measured by the dashboard
# itself on a real three-broker cluster (--cluster 3: Apache Kafka 4.1.1, a
# KRaft controller and three brokers; RF 3, min.insync.replicas 2; producer
# acks=all, idempotent, 10 sensors every 100 ms). One headless run; RUNS
# times over: broker-2 is SIGKILLed under load once it leads a partition, and brought back once every
# partition has a new leader and 2 in-sync replicas.
#
# Printed per kill, from the dashboard's events:
#   - "leader 2 → N in X s": from broker-2's exit to the first metadata read
#     (every 0.5 s) showing the new leader (the controller fences a broker
#     whose heartbeats stopped after broker.session.timeout.ms, 5 s here);
#   - "producer blocked ... unblocked after X s": how long acks=all writes
#     waited (the dead broker was still in the ISR until it was fenced);
#   - "back in the ISR X s after the restart".
# Needs Java 17+ and Maven (see README).
#
#   scripts/bench-failover.sh [RUNS]   default 3
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
work=$(mktemp -d /tmp/krl-bench-failover.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/krl" ./tui
{
	echo "wait-isr 3 180s"
	echo "wait-caught-up 120s"
	for _ in $(seq "$runs"); do
		echo "wait-isr 3 120s"
		echo "wait-leads broker-2 60s"
		echo "crash broker-2"
		echo "wait-isr 2 60s"
		echo "wait-caught-up 120s"
		echo "start broker-2"
		echo "wait-isr 3 120s"
		echo "wait-caught-up 120s"
	done
	echo "quit"
} >"$work/script.krl"
"$work/krl" --headless --cluster 3 --data-dir "$work/run" --interval 100ms \
	--script "$work/script.krl" 2>"$work/log" >/dev/null
grep -E "cluster of 3 brokers ready|leader 2 → |producer (still )?(un)?blocked|broker-2 (crashed|restarted)|ISR \[[0-9 ]+\] → \[1 2 3\]" "$work/log" |
	awk '/ISR .* → \[1 2 3\]/ { if (seen[$1]++) next } { print }'
echo "measured with: scripts/bench-failover.sh $runs ($(nproc) cores, $(date -u +%Y-%m-%d))"
