#!/usr/bin/env bash
# consumer-usage's write rate (issue 11, item 3), embedded broker and store:
#   - the maximum sustained rate of each mode: consumer-usage in a fresh
#     group and a fresh database, --reset earliest, over a backlog of the
#     producer's records (100 sensors): messages applied per second from
#     its start to its progress report that covers the whole backlog;
#   - guarded at 1,000 msg/s (100 sensors, one message each every 100 ms)
#     for DURATION: the lag consumer-usage reports every second (max, and
#     at the end), then, the producer stopped and the lag 0, the drift:
#     every sensor's totals as consumer-query answers them vs the topic's
#     own (read back with kcat: the sum of each sensor's deltas).
#
#   scripts/bench-writer.sh [RUNS [DURATION_S [BACKLOG]]]   defaults 3 300 100000
#       (the naive backlog is BACKLOG/10: it writes two documents a message)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3} duration=${2:-300} backlog=${3:-100000}
sensors=100
work=$(mktemp -d /tmp/krl-bench-writer.XXXXXX)
bin=$work/krl
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
command -v kcat >/dev/null || { echo "needs kcat (scripts/bench.sh installs it)" >&2; exit 1; }
go build -o "$bin" ./tui

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for FILE PATTERN SECONDS: until a line of FILE matches.
wait_for() {
	for _ in $(seq $(($3 * 20))); do
		grep -q "$2" "$1" 2>/dev/null && return
		sleep 0.05 # polling a child's output
	done
	echo "no '$2' in $1 within $3 s" >&2
	tail -5 "$1" >&2
	exit 1
}

# broker TOPIC: an embedded broker that creates TOPIC (the producer waits
# for its topic to exist), its address in $broker_addr.
broker() {
	local port
	port=$(free_port)
	"$bin" broker --listen "127.0.0.1:$port" --data-dir "$work/broker-$1" --topic "$1" >"$work/broker-$1.out" 2>&1 &
	pids+=($!)
	broker_addr=127.0.0.1:$port
	for _ in $(seq 300); do
		kcat -L -b "$broker_addr" -t "$1" -m 1 2>/dev/null | grep -q "partition 2" && return
		sleep 0.1 # waiting for a listener
	done
	echo "the embedded broker did not answer in 30 s" >&2
	exit 1
}
store_port=$(free_port)
"$bin" store --listen "127.0.0.1:$store_port" --data-dir "$work/store" >"$work/store.out" 2>&1 &
pids+=($!)
mongo=mongodb://127.0.0.1:$store_port
broker backlog-guarded && b_guarded=$broker_addr
broker backlog-naive && b_naive=$broker_addr
broker live && brokers=$broker_addr

echo "# scripts/bench-writer.sh, $(date -u +%Y-%m-%d), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), median of $runs"

# rate MODE TOPIC N RUN BROKERS: consumer-usage over the N records of TOPIC; prints msg/s.
rate() {
	local out=$work/rate-$1-$4.out t0 t1 pid
	t0=$(date +%s.%N)
	"$bin" consumer usage --brokers "$5" --mongo "$mongo/rate-$1-$4" --topic "$2" --mode "$1" \
		--reset earliest --group "rate-$1-$4" --http 127.0.0.1:0 >"$out" 2>"$out.err" &
	pid=$!
	pids+=("$pid")
	wait_for "$out" "\"processed\":$3[,}]" 1200
	t1=$(date +%s.%N)
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v a="$t0" -v b="$t1" -v n="$3" 'BEGIN {printf "%.0f\n", n/(b-a)}'
}

echo
echo "## maximum sustained rate: a backlog of $backlog (guarded) and $((backlog / 10)) (naive) records, $sensors sensors"
"$bin" producer --brokers "$b_guarded" --topic backlog-guarded --preload "$backlog" --sensors "$sensors" --http "" >/dev/null
"$bin" producer --brokers "$b_naive" --topic backlog-naive --preload "$((backlog / 10))" --sensors "$sensors" --http "" >/dev/null
for r in $(seq "$runs"); do
	g=$(rate guarded backlog-guarded "$backlog" "$r" "$b_guarded")
	n=$(rate naive backlog-naive "$((backlog / 10))" "$r" "$b_naive")
	echo "run $r: guarded $g msg/s · naive $n msg/s"
	echo "$g" >>"$work/g" && echo "$n" >>"$work/n"
done
echo "median: guarded $(median <"$work/g") msg/s · naive $(median <"$work/n") msg/s"

echo
echo "## guarded at 1,000 msg/s ($sensors sensors every 100 ms) for $duration s"
out=$work/live.out
"$bin" consumer usage --brokers "$brokers" --mongo "$mongo/live" --topic live --mode guarded \
	--reset earliest --group live --http 127.0.0.1:0 >"$out" 2>"$out.err" &
pids+=($!)
"$bin" producer --brokers "$brokers" --topic live --sensors "$sensors" --interval 100ms --seed 11 --http "" \
	>"$work/producer.out" 2>&1 &
producer=$!
pids+=("$producer")
sleep "$duration" # the length of the run is the measurement
kill "$producer"
wait "$producer" 2>/dev/null || true
end=$(date +%s)
# Caught up: a progress report with every partition at its high watermark
# after the producer stopped.
for _ in $(seq 600); do
	python3 - "$out" "$end" <<'EOF' && break
import json, sys
last = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "progress":
        last = e
from datetime import datetime
ok = last and datetime.fromisoformat(last["ts"].replace("Z", "+00:00")).timestamp() > float(sys.argv[2]) + 1 and \
    all(p["offset"] == p["high_watermark"] for p in last["positions"])
sys.exit(0 if ok else 1)
EOF
	sleep 0.5 # polling consumer-usage's progress reports
done
qport=$(free_port)
"$bin" consumer query --brokers "$brokers" --mongo "$mongo/live" --topic live --http "127.0.0.1:$qport" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$qport/usage" >"$work/usage.json" && break
	sleep 0.1 # waiting for a listener
done
kcat -C -b "$brokers" -t live -e -o beginning -q -f '%p %o %s\n' >"$work/topic.txt"
python3 - "$out" "$work/usage.json" "$work/topic.txt" "$duration" <<'EOF'
import json, sys
from decimal import Decimal
lags, produced = [], 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "progress":
        lags.append(sum(p["high_watermark"] - p["offset"] for p in e["positions"] if p["high_watermark"] >= 0))
# The truth: each sensor's deltas between consecutive messages in its
# partition's order, in hundredths.
last, truth, msgs = {}, {}, 0
for line in open(sys.argv[3]):
    p, o, value = line.split(" ", 2)
    m = json.loads(value)
    msgs += 1
    sid = m["sensor_id"]
    h, k = Decimal(str(m["odometry"]["hours_tot"])), Decimal(str(m["odometry"]["km_tot"]))
    if sid in last:
        dh, dk = h - last[sid][0], k - last[sid][1]
        t = truth.setdefault(sid, [0, 0, 0])
        if dh > 0 or dk > 0:
            t[0] += int(dh * 100); t[1] += int(dk * 100); t[2] += 1
    last[sid] = (h, k)
answer = {u["sensor_id"]: u for u in json.load(open(sys.argv[2]))["sensors"]}
drift = 0
for sid, (h, k, n) in truth.items():
    a = answer.get(sid, {"total_hours": 0, "total_km": 0, "records": 0})
    if round(a["total_hours"] * 100) != h or round(a["total_km"] * 100) != k or a["records"] != n:
        drift += 1
        print(f"  {sid}: answered {a}, topic says hours {h/100} km {k/100} records {n}")
steady = lags[5:] or lags
print(f"{msgs} messages in the topic ({msgs / int(sys.argv[4]):.0f} msg/s); consumer-usage's lag, reported every second: "
      f"max {max(steady)}, median {sorted(steady)[len(steady) // 2]} after the first 5 s (first 5 s: {lags[:5]}), "
      f"{lags[-1]} at the end; sensors with drift: {drift} of {len(truth)}")
EOF
