#!/usr/bin/env bash
# Side-by-side benchmark of namesrv against the rocketmq-rust NameServer (rocketmq-namesrv 1.0.0),
# alternating the two servers (A B A B ...) for ROUNDS rounds, server pinned to core 0 and the
# load tool to core 1 (namesrv with io_threads = 1). Then, per round: scaling over both cores
# (namesrv io_threads 1 pinned, 1 and 2 unpinned, the peer unpinned; server and load tool free),
# the storm's route tail pinned and with io_threads 2, the cost of metrics, access control and TLS,
# memory per topic at 1,000,000 topics, and the fleet-sizing scenario. Writes bench/results.md
# and bench/route-latency.svg.
#
# Env: ROUNDS (default 3), DURATION (measured seconds per route run, default 10), PEERS,
#      LIMIT_PAIRS (namesrv/canned pairs per round against the limit, default 3),
#      BENCH_PROFILE (cargo profile of namesrv and namesrv-bench, default dist, as shipped),
#      QUICK=1 (small shapes, for a smoke run), BASELINE (path of an earlier namesrv binary: it
#      runs the side-by-side workloads too, pinned as namesrv is, for a before/after table;
#      BASELINE_LABEL names it there, e.g. its commit).
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

# Where cargo puts the builds (CARGO_TARGET_DIR or the workspace's target/), and the profile
# measured: `dist`, as shipped, for namesrv and the load tool (so `canned` too) alike.
TARGET=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BENCH_PROFILE=${BENCH_PROFILE:-dist}
export BENCH_PROFILE
BENCH_COMMIT=$(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD || echo "+uncommitted")
export BENCH_COMMIT
log "building namesrv and namesrv-bench ($BENCH_PROFILE profile)"
(cd "$ROOT" && cargo build --profile "$BENCH_PROFILE" -p namesrv --bin namesrv >&2 \
    && cargo build --profile "$BENCH_PROFILE" -p namesrv-bench >&2)
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

start_server() { # namesrv|baseline|peer|canned [pinned|free] [io_threads] [extra flags...]
    local server=$1 placement=${2:-pinned} io=${3:-1}
    shift $(( $# < 3 ? $# : 3 ))
    local dir=$WORK/$server-$RANDOM pin=() bin=$TARGET/$BENCH_PROFILE/namesrv
    [ "$placement" = pinned ] && pin=(taskset -c 0)
    [ "$server" = baseline ] && bin=$BASELINE
    mkdir -p "$dir"
    if [ "$server" = canned ]; then
        "${pin[@]}" "$TARGET/$BENCH_PROFILE/namesrv-bench" canned --listen "127.0.0.1:$PORT" "$@" > "$dir/log" 2>&1 &
    elif [ "$server" != peer ]; then
        NAMESRV_HTTP_LISTEN= NAMESRV_IO_THREADS=$io NAMESRV_KV_CONFIG_PATH=$dir/kvConfig.json \
            NAMESRV_CONFIG_STORE_PATH=$dir/namesrv.properties \
            "${pin[@]}" "$bin" --listen "127.0.0.1:$PORT" \
            --set max_frame_bytes=134217728 "$@" > "$dir/log" 2>&1 &
    else
        cat > "$dir/ns.toml" <<TOML
rocketmqHome = "$dir"
kvConfigPath = "$dir/kvConfig.json"
configStorePath = "$dir/namesrv.properties"
listenPort = $PORT
bindAddress = "127.0.0.1"
TOML
        (cd "$dir" && ROCKETMQ_HOME=$dir exec "${pin[@]}" "$PEER_BIN" -c ns.toml > "$dir/log" 2>&1) &
    fi
    SERVER_PID=$!
    wait_port || { log "$server did not start"; cat "$dir/log" >&2; return 1; }
}

# Runs namesrv-bench against the server started last and appends its figures to the raw file.
measure() { # round workload server-label load-placement args...
    local round=$1 name=$2 label=$3 placement=$4 pin=()
    shift 4
    [ "$placement" = pinned ] && pin=(taskset -c 1)
    local before
    before=$(cpu_ticks)
    # shellcheck disable=SC2086
    if out=$("${pin[@]}" "$TARGET/$BENCH_PROFILE/namesrv-bench" --addr "127.0.0.1:$PORT" --json "$@" 2> "$WORK/bench.err"); then
        printf '{"round":%d,"pair":%d,"workload":"%s","server":"%s","peak_rss_kb":%s,"steal_percent":%s,"result":%s}\n' \
            "$round" "${PAIR:-1}" "$name" "$label" "$(peak_rss_kb)" "$(steal_percent "$before")" "$out" >> "$RAW"
    else
        log "  failed: $(tr '\r' '\n' < "$WORK/bench.err" | tail -1)"
        printf '{"round":%d,"pair":%d,"workload":"%s","server":"%s","peak_rss_kb":%s,"error":%s}\n' \
            "$round" "${PAIR:-1}" "$name" "$label" "$(peak_rss_kb)" "$(tr '\r' '\n' < "$WORK/bench.err" | tail -1 | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()))')" >> "$RAW"
    fi
}

stop_server() {
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
    sleep 0.5
}

# The machine's CPU time as "steal total" in clock ticks (/proc/stat): on a virtual machine, steal
# is time the host gave the vCPUs to others; it makes every figure of that run noisier.
cpu_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t}' /proc/stat; }
steal_percent() { # "steal total" from cpu_ticks at the start
    local now
    now=$(cpu_ticks)
    awk -v a="$1" -v b="$now" 'BEGIN {split(a, x, " "); split(b, y, " "); d = y[2] - x[2];
        printf "%.1f", (d > 0 ? 100 * (y[1] - x[1]) / d : 0)}'
}

peak_rss_kb() { awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0; }

# What access control and TLS cost: a CA and a server certificate for 127.0.0.1, one admin account.
SEC=$WORK/security
mkdir -p "$SEC"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench-ca" \
    -keyout "$SEC/ca.key" -out "$SEC/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$SEC/server.key" -out "$SEC/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$SEC/server.ext"
openssl x509 -req -in "$SEC/server.csr" -CA "$SEC/ca.pem" -CAkey "$SEC/ca.key" -CAcreateserial -days 2 \
    -extfile "$SEC/server.ext" -out "$SEC/server.pem" 2>/dev/null
cat > "$SEC/accounts.toml" <<TOML
[[accounts]]
access_key = "bench-admin"
secret_key = "bench-secret-0123456789"
role = "admin"
TOML
ACL_SET=(--set acl_enabled=true --set "acl_accounts_file=$SEC/accounts.toml" --set acl_protect=all)
TLS_SET=(--set tls_mode=permissive --set "tls_cert_file=$SEC/server.pem" --set "tls_key_file=$SEC/server.key")
SIGN=(--access-key bench-admin --secret-key bench-secret-0123456789)
TLS_CA=(--tls-ca "$SEC/ca.pem")

# name | namesrv-bench arguments
if [ "${QUICK:-0}" = 1 ]; then
    RIP29="--clusters 4 --brokers 2 --topics 500 --queues 8 --shared-topics"
    BIG="--clusters 1 --brokers 1 --topics 20000"
    MANY="--clusters 2 --brokers 50 --topics 20"
    CONNS=2000
    MEMORY_TOPICS=100000
    FLEET="--clients 100 --brokers 5 --topics-per-broker 2000 --phase 3"
else
    RIP29="--clusters 4 --brokers 8 --topics 10000 --queues 8 --shared-topics"
    BIG="--clusters 1 --brokers 1 --topics 100000"
    MANY="--clusters 10 --brokers 100 --topics 20"
    CONNS=10000
    MEMORY_TOPICS=1000000
    FLEET="--clients 1000 --poll-ms 300 --brokers 50 --topics-per-broker 10000 --register-ms 3000 --phase 10"
fi
LOAD="--warmup 2 --duration $DURATION --depth 4"
LIMIT_SHAPE="--clusters 4 --brokers 8 --topics 1000 --queues 8 --shared-topics"
LIMIT_LOAD="--warmup 2 --duration $DURATION --depth 8 --connections 16"
LIMIT_PAIRS=${LIMIT_PAIRS:-3}
LIMIT_BODY=0
WORKLOADS=(
    "route-16|route $RIP29 $LOAD --connections 16"
    "route-256|route $RIP29 $LOAD --connections 256"
    "register-10k|register --clusters 1 --brokers 8 --topics 10000 --rounds 5"
    "storm|storm $RIP29 $LOAD --connections 16 --storm-period-ms 1000"
    "big-broker|route $BIG $LOAD --connections 16"
    "many-brokers|route $MANY $LOAD --connections 16"
    "conns|conns --count $CONNS"
)

SERVERS=(namesrv peer)
if [ -n "${BASELINE:-}" ]; then
    [ -x "$BASELINE" ] || { log "BASELINE=$BASELINE is not an executable"; exit 2; }
    SERVERS+=(baseline)
    export BASELINE_LABEL=${BASELINE_LABEL:-$BASELINE}
fi

mkdir -p "$ROOT/bench"
: > "$RAW"
for round in $(seq "$ROUNDS"); do
    for entry in "${WORKLOADS[@]}"; do
        name=${entry%%|*}
        args=${entry#*|}
        for server in "${SERVERS[@]}"; do
            log "round $round: $name on $server"
            start_server "$server"
            # shellcheck disable=SC2086
            measure "$round" "$name" "$server" pinned $args
            stop_server
        done
    done
    # Scaling: the same route load with both cores shared by server and load tool.
    for depth in 8 32; do
        for config in "namesrv pinned 1" "namesrv free 1" "namesrv free 2" "peer free -"; do
            read -r server placement io <<< "$config"
            label=$server-$placement${io/-/}
            [ "$server" = peer ] && label=peer-free
            log "round $round: scale-d$depth on $label"
            start_server "$server" "$placement" "$io"
            # shellcheck disable=SC2086
            measure "$round" "scale-d$depth" "$label" "$placement" route $RIP29 --warmup 2 --duration "$DURATION" \
                --connections 16 --depth "$depth" --server-pid "$SERVER_PID"
            stop_server
        done
    done
    # The storm's route tail on one pinned core and with io_threads 2 over both cores.
    for config in "pinned 1" "free 2"; do
        read -r placement io <<< "$config"
        log "round $round: storm-scale on namesrv-$placement$io"
        start_server namesrv "$placement" "$io"
        # shellcheck disable=SC2086
        measure "$round" storm-scale "namesrv-$placement$io" "$placement" storm $RIP29 $LOAD --connections 16 \
            --storm-period-ms 1000
        stop_server
    done
    # What metrics, access control and TLS cost: the route load pinned, as the side-by-side runs.
    for config in no-metrics plain acl tls acl-tls; do
        log "round $round: security on $config"
        server_set=() client_set=()
        case $config in
            no-metrics) server_set=(--set metrics_enabled=false) ;;
            acl) server_set=("${ACL_SET[@]}") client_set=("${SIGN[@]}") ;;
            tls) server_set=("${TLS_SET[@]}") client_set=("${TLS_CA[@]}") ;;
            acl-tls) server_set=("${ACL_SET[@]}" "${TLS_SET[@]}") client_set=("${SIGN[@]}" "${TLS_CA[@]}") ;;
        esac
        start_server namesrv pinned 1 "${server_set[@]}"
        # shellcheck disable=SC2086
        measure "$round" security "$config" pinned "${client_set[@]}" route $RIP29 $LOAD --connections 16 \
            --server-pid "$SERVER_PID"
        stop_server
    done
    # The physical limit: the route load (16 connections x 8 in flight, 32 brokers x 1,000 shared
    # topics) on one pinned core against namesrv and against `namesrv-bench canned`, a server that
    # only frames, parses headers and answers a fixed body of the size namesrv's replies had.
    # LIMIT_PAIRS pairs a round, each pair's first server alternating, so neither always meets the
    # host just after the other; canned answers with the body size namesrv's last run measured.
    # With BASELINE, the earlier build runs after each pair, against the same canned run.
    for pair in $(seq "$LIMIT_PAIRS"); do
        order=(namesrv canned)
        (( (round + pair) % 2 )) && order=(canned namesrv)
        # With an earlier build, it runs in each pair too: its own ratio to the same limit.
        [ -n "${BASELINE:-}" ] && order+=(baseline)
        for server in "${order[@]}"; do
            start=(1) about=""
            if [ "$server" = canned ]; then
                [ "$LIMIT_BODY" -gt 0 ] || continue
                start=(- --body-bytes "$LIMIT_BODY") about=" ($LIMIT_BODY body bytes)"
            fi
            log "round $round: limit pair $pair on $server$about"
            start_server "$server" pinned "${start[@]}"
            # shellcheck disable=SC2086
            PAIR=$pair measure "$round" limit "$server" pinned route $LIMIT_SHAPE $LIMIT_LOAD --server-pid "$SERVER_PID"
            stop_server
            if [ "$server" = namesrv ]; then
                LIMIT_BODY=$(tail -1 "$RAW" | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]["route"]; print(round(r["bytes_per_second"]/max(r["per_second"],1)))' 2>/dev/null || echo 0)
            fi
        done
    done
    log "round $round: memory on namesrv"
    start_server namesrv free 1 --set max_frame_bytes=1073741824 --set frame_budget_bytes=2147483648 \
        --set max_inflated_body_bytes=1073741824 --set max_topics_per_broker=2000000
    measure "$round" memory namesrv free memory --topics "$MEMORY_TOPICS" --server-pid "$SERVER_PID"
    stop_server
    log "round $round: fleet on namesrv"
    start_server namesrv free 0
    # shellcheck disable=SC2086
    measure "$round" fleet namesrv free fleet $FLEET --server-pid "$SERVER_PID"
    stop_server
done

python3 "$ROOT/scripts/bench_report.py" "$RAW" "$ROOT/bench" "ROUNDS=$ROUNDS DURATION=$DURATION${QUICK:+ QUICK=$QUICK}"
log "wrote $ROOT/bench/results.md"
