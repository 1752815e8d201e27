#!/usr/bin/env bash
# Side-by-side benchmark of namesrv against the rocketmq-rust NameServer (rocketmq-namesrv 1.0.0),
# alternating the two servers (A B A B ...) for ROUNDS rounds, server pinned to core 0 and the
# load tool to core 1. Writes bench/results.md and bench/route-latency.svg.
#
# Env: ROUNDS (default 3), DURATION (measured seconds per route run, default 10), PEERS,
#      QUICK=1 (small shapes, for a smoke run).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PEERS:-${HOME:-/root}/.cache/rocketmq-peers}
PEER_BIN=$PEERS/bin/rocketmq-namesrv-rust
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WORK=$(mktemp -d /tmp/namesrv-bench.XXXXXX)
RAW=$ROOT/bench/raw.jsonl
PORT=29886
SERVER_PID=

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

cleanup() {
    [ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

BENCH_COMMIT=$(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD || echo "+uncommitted")
export BENCH_COMMIT
log "building namesrv and namesrv-bench (release)"
(cd "$ROOT" && cargo build --release --bin namesrv --bin namesrv-bench >&2)
if [ ! -x "$PEER_BIN" ]; then
    log "installing rocketmq-namesrv 1.0.0 into $PEERS (about 5 minutes cold)"
    CARGO_TARGET_DIR=$PEERS/target cargo install --root "$PEERS" rocketmq-namesrv --version 1.0.0 --locked >&2
fi
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

start_server() { # namesrv|peer
    local dir=$WORK/$1-$RANDOM
    mkdir -p "$dir"
    if [ "$1" = namesrv ]; then
        NAMESRV_KV_CONFIG_PATH=$dir/kvConfig.json NAMESRV_CONFIG_STORE_PATH=$dir/namesrv.properties \
            taskset -c 0 "$ROOT/target/release/namesrv" --listen "127.0.0.1:$PORT" \
            --set max_frame_bytes=134217728 > "$dir/log" 2>&1 &
    else
        cat > "$dir/ns.toml" <<TOML
rocketmqHome = "$dir"
kvConfigPath = "$dir/kvConfig.json"
configStorePath = "$dir/namesrv.properties"
listenPort = $PORT
bindAddress = "127.0.0.1"
TOML
        (cd "$dir" && ROCKETMQ_HOME=$dir exec taskset -c 0 "$PEER_BIN" -c ns.toml > "$dir/log" 2>&1) &
    fi
    SERVER_PID=$!
    wait_port || { log "$1 did not start"; cat "$dir/log" >&2; return 1; }
}

stop_server() {
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
    sleep 0.5
}

peak_rss_kb() { awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0; }

# name | namesrv-bench arguments
if [ "${QUICK:-0}" = 1 ]; then
    RIP29="--clusters 4 --brokers 2 --topics 500 --queues 8 --shared-topics"
    BIG="--clusters 1 --brokers 1 --topics 20000"
    MANY="--clusters 2 --brokers 50 --topics 20"
    CONNS=2000
else
    RIP29="--clusters 4 --brokers 8 --topics 10000 --queues 8 --shared-topics"
    BIG="--clusters 1 --brokers 1 --topics 100000"
    MANY="--clusters 10 --brokers 100 --topics 20"
    CONNS=10000
fi
LOAD="--warmup 2 --duration $DURATION --depth 4"
WORKLOADS=(
    "route-16|route $RIP29 $LOAD --connections 16"
    "route-256|route $RIP29 $LOAD --connections 256"
    "register-10k|register --clusters 1 --brokers 8 --topics 10000 --rounds 5"
    "storm|storm $RIP29 $LOAD --connections 16 --storm-period-ms 1000"
    "big-broker|route $BIG $LOAD --connections 16"
    "many-brokers|route $MANY $LOAD --connections 16"
    "conns|conns --count $CONNS"
)

mkdir -p "$ROOT/bench"
: > "$RAW"
for round in $(seq "$ROUNDS"); do
    for entry in "${WORKLOADS[@]}"; do
        name=${entry%%|*}
        args=${entry#*|}
        for server in namesrv peer; do
            log "round $round: $name on $server"
            start_server "$server"
            # shellcheck disable=SC2086
            if out=$(taskset -c 1 "$ROOT/target/release/namesrv-bench" --addr "127.0.0.1:$PORT" --json $args 2> "$WORK/bench.err"); then
                printf '{"round":%d,"workload":"%s","server":"%s","peak_rss_kb":%s,"result":%s}\n' \
                    "$round" "$name" "$server" "$(peak_rss_kb)" "$out" >> "$RAW"
            else
                log "  failed: $(tr '\r' '\n' < "$WORK/bench.err" | tail -1)"
                printf '{"round":%d,"workload":"%s","server":"%s","peak_rss_kb":%s,"error":%s}\n' \
                    "$round" "$name" "$server" "$(peak_rss_kb)" "$(tr '\r' '\n' < "$WORK/bench.err" | tail -1 | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()))')" >> "$RAW"
            fi
            stop_server
        done
    done
done

python3 "$ROOT/scripts/bench_report.py" "$RAW" "$ROOT/bench" "ROUNDS=$ROUNDS DURATION=$DURATION${QUICK:+ QUICK=$QUICK}"
log "wrote $ROOT/bench/results.md"
