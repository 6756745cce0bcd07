#!/usr/bin/env bash
# Run a real Apache Kafka broker (single combined KRaft node) without Docker.
#
#   scripts/real-kafka.sh start DIR [PORT]   start (or reuse) a broker kept in DIR;
#                                            prints the bootstrap address
#                                            127.0.0.1:PORT alone on the last
#                                            line of stdout once it is ready
#   scripts/real-kafka.sh stop DIR           stop the broker of DIR (idempotent)
#   scripts/real-kafka.sh classpath          resolve the jars; print the path of
#                                            the classpath file (for Kafka tools)
#   scripts/real-kafka.sh warmup BOOTSTRAP [TIMEOUT]
#                                            run the warm-up (below) against any
#                                            running broker or cluster; prints its
#                                            summary (used by the dashboard's
#                                            --cluster N)
#
# PORT defaults to 19092; the controller listens on PORT+1. Everything the script
# says goes to stderr; stdout carries only the result.
#
# The broker is resolved from Maven Central with the pom in scripts/real-kafka/
# (only Java 17+ and Maven are needed). The resolved classpath is cached in
# $KRL_KAFKA_CACHE_DIR (default ~/.cache/krl/real-kafka); when that file exists
# and every jar it names is still in the local Maven repository, mvn is not run.
#
# "Ready" means: the broker logged "Kafka Server started", PORT accepts TCP
# connections, and a warm-up (real-kafka/Warmup.java, Kafka's own Java admin
# client: DescribeCluster, then OffsetFetch for one group per __consumer_offsets
# partition) got answers, so every group coordinator is active. Without the
# warm-up, the first AdminClient.ListConsumerGroupOffsets of confluent-kafka-go
# v2.11.1 against a fresh broker gets a group-level NOT_COORDINATOR and librdkafka
# crashes the process with SIGSEGV. The warm-up is compiled once with javac (so a
# JDK is needed, not only a JRE) and cached next to the classpath file.
#
# DIR holds server.properties, log4j2.properties, cluster.id, data/ (log.dirs),
# kafka.log (broker output; the previous run's is kafka.log.1), format.log,
# warmup.log and kafka.pid. A DIR that already holds a formatted broker is
# reused as it is (not formatted again); a broker already running from DIR on
# the same PORT is reused too. If the broker does not become ready within the
# timeout, it is stopped again and the script fails with the tail of its log.
#
# Environment:
#   KRL_KAFKA_VERSION        Kafka version (default: the pom's, 4.1.1)
#   KRL_KAFKA_CACHE_DIR      where the classpath file is cached
#   KRL_KAFKA_HEAP           JVM heap options (default: -Xmx512m)
#   KRL_KAFKA_START_TIMEOUT  seconds to wait for the broker, and again for the
#                            warm-up (default 90)
#   KRL_KAFKA_STOP_TIMEOUT   seconds to wait after SIGTERM before SIGKILL (default 20)
#   KRL_KAFKA_WARMUP=0       skip the warm-up
#   JAVA_HOME                used for java and javac when set
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
POM="$SCRIPT_DIR/real-kafka/pom.xml"
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
DEFAULT_PORT=19092

log() { printf 'real-kafka: %s\n' "$*" >&2; }
die() { printf 'real-kafka: error: %s\n' "$*" >&2; exit 1; }

usage() {
	cat >&2 <<'EOF'
usage: real-kafka.sh start DIR [PORT]   start a single-node KRaft broker kept in DIR
                                       (PORT default 19092, controller on PORT+1);
                                       prints 127.0.0.1:PORT on the last stdout line
       real-kafka.sh stop DIR           stop it (SIGTERM, then SIGKILL after a while)
       real-kafka.sh classpath          resolve the jars and print the classpath file
       real-kafka.sh warmup BOOTSTRAP [TIMEOUT]
                                        warm up the group coordinators of a running
                                        broker or cluster (TIMEOUT default 90 s)
EOF
	exit 2
}

now() { date +%s; }

# ms: milliseconds since the epoch (bash 5's EPOCHREALTIME, else whole seconds).
ms() {
	if [[ -n "${EPOCHREALTIME:-}" ]]; then
		local t=${EPOCHREALTIME/[.,]/}
		printf '%s\n' "$((10#${t:0:${#t}-3}))"
	else
		printf '%s000\n' "$(date +%s)"
	fi
}

# since MS: seconds elapsed since MS, with one decimal.
since() {
	local d=$(($(ms) - $1))
	printf '%d.%d\n' "$((d / 1000))" "$((d % 1000 / 100))"
}

java_bin() {
	if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
		printf '%s\n' "$JAVA_HOME/bin/java"
	elif command -v java >/dev/null 2>&1; then
		command -v java
	else
		die "java not found: install a Java 17+ JDK (e.g. apt-get install -y openjdk-17-jdk-headless) or set JAVA_HOME"
	fi
}

check_java_version() {
	local java=$1 spec
	spec=$("$java" -XshowSettings:properties -version 2>&1 |
		sed -n 's/^ *java\.specification\.version = *//p' | head -n1) || true
	[[ -n "$spec" ]] || die "could not run '$java -version'"
	# "1.8" style versions are all older than 17.
	if [[ "$spec" == 1.* ]] || ((${spec%%.*} < 17)); then
		die "Kafka 4 needs Java 17 or newer; '$java' is Java $spec (set JAVA_HOME to a newer JDK)"
	fi
}

cache_dir() {
	printf '%s\n' "${KRL_KAFKA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/krl/real-kafka}"
}

# classpath_file prints the path of a classpath file whose jars all exist,
# running Maven only when there is none yet.
classpath_file() {
	[[ -f "$POM" ]] || die "pom not found at $POM"
	local version=${KRL_KAFKA_VERSION:-}
	local key dir file
	key=$( { cat "$POM"; printf '%s\n' "$version"; } | cksum | cut -d' ' -f1)
	dir=$(cache_dir)
	file="$dir/classpath-${version:-default}-$key.txt"

	if [[ -s "$file" ]] && all_jars_exist "$file"; then
		log "reusing resolved classpath $file"
		printf '%s\n' "$file"
		return
	fi

	command -v mvn >/dev/null 2>&1 ||
		die "mvn not found: install Maven (e.g. apt-get install -y maven); it resolves Kafka from Maven Central"
	mkdir -p "$dir"
	local tmp out
	tmp=$(mktemp "$dir/.classpath.XXXXXX")
	out=$(mktemp "$dir/.mvn-output.XXXXXX")
	local -a args=(-B -q -f "$POM" "$DEPENDENCY_PLUGIN:build-classpath"
		"-Dmdep.outputFile=$tmp" -Dmdep.includeScope=runtime)
	[[ -z "$version" ]] || args+=("-Dkafka.version=$version")
	log "resolving Apache Kafka ${version:-(pom default)} with Maven (first run downloads ~60 MB into ~/.m2)..."
	local start
	start=$(ms)
	if ! mvn "${args[@]}" >"$out" 2>&1; then
		tail -n 40 "$out" >&2 || true
		rm -f "$tmp" "$out"
		die "Maven could not resolve the Kafka jars (see above)"
	fi
	rm -f "$out"
	[[ -s "$tmp" ]] || { rm -f "$tmp"; die "Maven wrote an empty classpath"; }
	all_jars_exist "$tmp" || { rm -f "$tmp"; die "Maven's classpath names jars that do not exist"; }
	mv -f "$tmp" "$file"
	log "resolved in $(since "$start") s; classpath cached in $file"
	printf '%s\n' "$file"
}

all_jars_exist() {
	local jar
	local -a jars
	IFS=: read -r -a jars <"$1" || true
	((${#jars[@]} > 0)) || return 1
	for jar in "${jars[@]}"; do
		[[ -f "$jar" ]] || return 1
	done
}

# warmup_classes CPFILE: prints a directory holding the compiled Warmup class
# (compiled once with javac, then cached); fails when no javac is available.
warmup_classes() {
	local src="$SCRIPT_DIR/real-kafka/Warmup.java" key dir javac
	[[ -f "$src" ]] || return 1
	key=$( { cat "$src" "$1"; } | cksum | cut -d' ' -f1)
	dir="$(cache_dir)/warmup-$key"
	if [[ ! -f "$dir/Warmup.class" ]]; then
		if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/javac" ]]; then
			javac="$JAVA_HOME/bin/javac"
		elif command -v javac >/dev/null 2>&1; then
			javac=$(command -v javac)
		else
			return 1
		fi
		local tmp
		tmp=$(mktemp -d "$(cache_dir)/.warmup.XXXXXX")
		"$javac" -nowarn -cp "$(<"$1")" -d "$tmp" "$src" >&2 || { rm -rf "$tmp"; return 1; }
		rm -rf "$dir"
		mv "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
	fi
	printf '%s\n' "$dir"
}

# warm_up DIR PID PORT CPFILE TIMEOUT: real Kafka requests (DescribeCluster,
# OffsetFetch) until every group coordinator partition is active; see
# real-kafka/Warmup.java for why.
warm_up() {
	local dir=$1 pid=$2 port=$3 cpfile=$4 timeout=$5 classes
	if [[ "${KRL_KAFKA_WARMUP:-1}" == 0 ]]; then
		log "skipping the warm-up (KRL_KAFKA_WARMUP=0)"
		return 0
	fi
	if ! classes=$(warmup_classes "$cpfile"); then
		log "warning: no javac (a JDK, not only a JRE, is needed to compile the warm-up); skipping it"
		return 0
	fi
	if ! "$(java_bin)" -Xmx128m -XX:TieredStopAtLevel=1 \
		-cp "$(<"$cpfile"):$classes" Warmup "127.0.0.1:$port" "$timeout" \
		>"$dir/warmup.log" 2>&1; then
		cat "$dir/warmup.log" >&2 || true
		alive "$pid" || { rm -f "$dir/kafka.pid"; tail_log "$dir" 60; die "the broker (pid $pid) exited during the warm-up"; }
		tail_log "$dir" 30
		log "the broker (pid $pid) is up but did not answer the warm-up requests"
		return 1
	fi
	log "$(grep -m1 "^warm:" "$dir/warmup.log" || echo "warm-up done")"
}

# port_in_use PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_in_use() {
	timeout 2 "${BASH:-bash}" -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# alive PID: true while PID runs (a zombie, i.e. our own child that already
# exited but was not reaped, counts as dead).
alive() {
	kill -0 "$1" 2>/dev/null || return 1
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	[[ "${stat%% *}" != Z ]]
}

# broker_pid DIR: prints the pid of the running broker of DIR, if any.
broker_pid() {
	local pidfile="$1/kafka.pid" pid
	[[ -f "$pidfile" ]] || return 1
	pid=$(tr -dc '0-9' <"$pidfile")
	[[ -n "$pid" ]] || return 1
	alive "$pid" || return 1
	# Guard against a recycled pid: it must be a kafka.Kafka on this DIR.
	if [[ -r "/proc/$pid/cmdline" ]]; then
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "kafka.Kafka $1/server.properties" || return 1
	fi
	printf '%s\n' "$pid"
}

tail_log() {
	if [[ -f "$1/kafka.log" ]]; then
		log "last lines of $1/kafka.log:"
		tail -n "${2:-40}" "$1/kafka.log" >&2 || true
	fi
}

valid_port() {
	[[ "$1" =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= 65534))
}

write_config() {
	local dir=$1 port=$2 ctrl=$3
	cat >"$dir/server.properties" <<EOF
# Written by scripts/real-kafka.sh: a single combined KRaft node for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=3
auto.create.topics.enable=true
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Retention is checked every second: a topic given a short retention.ms
# (krl --retention) loses its old segments within seconds; a topic without
# one keeps the default week.
log.retention.check.interval.ms=1000
EOF
	cat >"$dir/log4j2.properties" <<'EOF'
# Written by scripts/real-kafka.sh (the broker's output goes to kafka.log).
status = warn
# Keep logging while the broker shuts down (its own hook runs after SIGTERM).
shutdownHook = disable
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
EOF
}

new_cluster_id() {
	# A Kafka Uuid: 16 random bytes, base64url without padding (22 chars).
	# Kafka avoids ids starting with '-' (they look like options), so do we.
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
		[[ ${#id} -eq 22 && "$id" != -* && "$id" != AAAAAAAAAAAAAAAAAAAAA* ]] && break
	done
	printf '%s\n' "$id"
}

# wait_ready DIR PID PORT TIMEOUT: waits for the "Kafka Server started" line
# and a listening PORT; dies if the broker exits, returns 1 on timeout.
wait_ready() {
	local dir=$1 pid=$2 port=$3 timeout=$4
	local deadline=$(($(now) + timeout))
	while :; do
		if ! alive "$pid"; then
			rm -f "$dir/kafka.pid"
			tail_log "$dir" 60
			die "the broker (pid $pid) exited during startup"
		fi
		if grep -qF "Kafka Server started" "$dir/kafka.log" 2>/dev/null && port_in_use "$port"; then
			return 0
		fi
		if (($(now) >= deadline)); then
			tail_log "$dir" 60
			log "the broker (pid $pid) did not come up within ${timeout}s"
			return 1
		fi
		sleep 0.25
	done
}

cmd_start() {
	(($# >= 1 && $# <= 2)) || usage
	local dir=$1 port=${2:-$DEFAULT_PORT}
	valid_port "$port" || die "invalid PORT '$port' (the controller takes PORT+1)"
	local ctrl=$((port + 1))
	local timeout=${KRL_KAFKA_START_TIMEOUT:-90}
	[[ "$timeout" =~ ^[0-9]+$ ]] || die "KRL_KAFKA_START_TIMEOUT must be a number of seconds"

	mkdir -p "$dir" || die "cannot create $dir"
	dir=$(cd "$dir" && pwd -P)
	[[ "$dir" != *[,\\$'\n']* ]] || die "DIR must not contain commas, backslashes or newlines: $dir"

	local java
	java=$(java_bin)
	check_java_version "$java"

	local pid
	if pid=$(broker_pid "$dir"); then
		local running_port
		running_port=$(sed -n 's|^advertised.listeners=PLAINTEXT://127.0.0.1:||p' "$dir/server.properties")
		[[ "$running_port" == "$port" ]] ||
			die "a broker from $dir is already running (pid $pid) on port $running_port, not $port; stop it first"
		log "a broker from $dir is already running (pid $pid); reusing it"
		wait_ready "$dir" "$pid" "$port" "$timeout" ||
			die "it is left running: stop it with '$0 stop $dir'"
		printf '127.0.0.1:%s\n' "$port"
		return
	fi
	rm -f "$dir/kafka.pid"

	local p
	for p in "$port" "$ctrl"; do
		if port_in_use "$p"; then
			die "port $p on 127.0.0.1 is busy (the broker needs PORT=$port and PORT+1=$ctrl); pick another PORT"
		fi
	done

	local cpfile cp
	cpfile=$(classpath_file)
	cp=$(<"$cpfile")

	write_config "$dir" "$port" "$ctrl"
	mkdir -p "$dir/data"

	local -a jvm
	read -r -a jvm <<<"${KRL_KAFKA_HEAP:--Xmx512m}"
	jvm+=(-Djava.awt.headless=true "-Dlog4j2.configurationFile=$dir/log4j2.properties" -cp "$cp")

	if [[ -f "$dir/data/meta.properties" ]]; then
		log "reusing the formatted storage in $dir/data"
	else
		local cluster_id
		if [[ -s "$dir/cluster.id" ]]; then
			cluster_id=$(<"$dir/cluster.id")
		else
			cluster_id=$(new_cluster_id)
			printf '%s\n' "$cluster_id" >"$dir/cluster.id"
		fi
		log "formatting storage in $dir/data (cluster id $cluster_id)"
		if ! "$java" "${jvm[@]}" kafka.tools.StorageTool format \
			-t "$cluster_id" -c "$dir/server.properties" >"$dir/format.log" 2>&1; then
			cat "$dir/format.log" >&2 || true
			die "formatting the storage failed"
		fi
	fi

	[[ ! -f "$dir/kafka.log" ]] || mv -f "$dir/kafka.log" "$dir/kafka.log.1"
	log "starting Kafka on 127.0.0.1:$port (controller 127.0.0.1:$ctrl), output in $dir/kafka.log"
	local start
	start=$(ms)
	# setsid: the broker must not receive signals meant for the caller's
	# process group (e.g. Ctrl-C on a test run); stop it with 'stop DIR'.
	local -a launcher=()
	if command -v setsid >/dev/null 2>&1; then launcher=(setsid); fi
	"${launcher[@]}" "$java" "${jvm[@]}" kafka.Kafka "$dir/server.properties" \
		</dev/null >"$dir/kafka.log" 2>&1 &
	pid=$!
	printf '%s\n' "$pid" >"$dir/kafka.pid"

	if ! wait_ready "$dir" "$pid" "$port" "$timeout"; then
		stop_broker "$dir" "$pid"
		die "the broker did not start (it was stopped again; see $dir/kafka.log)"
	fi
	log "listening after $(since "$start") s; warming up the group coordinator"
	if ! warm_up "$dir" "$pid" "$port" "$cpfile" "$timeout"; then
		stop_broker "$dir" "$pid"
		die "the broker did not answer (it was stopped again; see $dir/kafka.log and $dir/warmup.log)"
	fi
	log "ready in $(since "$start") s (pid $pid)"
	printf '127.0.0.1:%s\n' "$port"
}

cmd_stop() {
	(($# == 1)) || usage
	local dir=$1
	if [[ ! -d "$dir" ]]; then
		log "no broker: $dir does not exist"
		return 0
	fi
	dir=$(cd "$dir" && pwd -P)
	local pid
	if ! pid=$(broker_pid "$dir"); then
		[[ ! -f "$dir/kafka.pid" ]] || log "removing stale $dir/kafka.pid"
		rm -f "$dir/kafka.pid"
		log "no broker running from $dir"
		return 0
	fi
	stop_broker "$dir" "$pid"
}

# stop_broker DIR PID: SIGTERM, wait, then SIGKILL; removes DIR/kafka.pid.
stop_broker() {
	local dir=$1 pid=$2
	local timeout=${KRL_KAFKA_STOP_TIMEOUT:-20}
	log "stopping the broker (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$(($(now) + timeout))
	while alive "$pid" && (($(now) < deadline)); do
		sleep 0.2
	done
	if alive "$pid"; then
		log "still running after ${timeout}s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		deadline=$(($(now) + 10))
		while alive "$pid" && (($(now) < deadline)); do
			sleep 0.1
		done
		! alive "$pid" || die "pid $pid survived SIGKILL"
	fi
	rm -f "$dir/kafka.pid"
	log "stopped"
}

cmd_warmup() {
	(($# >= 1 && $# <= 2)) || usage
	local bootstrap=$1 timeout=${2:-90} cpfile classes
	[[ "$timeout" =~ ^[0-9]+$ ]] || die "TIMEOUT must be a number of seconds"
	cpfile=$(classpath_file)
	classes=$(warmup_classes "$cpfile") ||
		die "no javac: a JDK (not only a JRE) is needed to compile the warm-up"
	local out
	if ! out=$("$(java_bin)" -Xmx128m -XX:TieredStopAtLevel=1 \
		-cp "$(<"$cpfile"):$classes" Warmup "$bootstrap" "$timeout" 2>&1); then
		printf '%s\n' "$out" | tail -n 20 >&2
		die "the warm-up against $bootstrap failed"
	fi
	grep -m1 "^warm:" <<<"$out" || echo "warm-up done"
}

cmd_classpath() {
	(($# == 0)) || usage
	classpath_file
}

(($# >= 1)) || usage
cmd=$1
shift
case "$cmd" in
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
classpath) cmd_classpath "$@" ;;
warmup) cmd_warmup "$@" ;;
-h | --help | help) usage ;;
*) usage ;;
esac
