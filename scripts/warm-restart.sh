#!/usr/bin/env bash
# Warm restart at scale, measured on release builds (figures for docs/performance.md, "Warm restart at scale"):
#   1. route p99 with the route snapshot on and off: `namesrv-bench route` over 1,000,000 topics
#      (20 brokers x 50,000), a window that holds the snapshot written after the registrations;
#   2. the snapshot written at SIGTERM (bytes, time) with the brokers still registered, then the
#      restart on the same state directory: load time, and time from start to the first route
#      served (nsadmin polling topicRoute).
# Usage: scripts/warm-restart.sh [TOPICS_PER_BROKER] (default 50000, 20 brokers). Env: NS_BIN_PREBUILT=1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOPICS=${1:-50000}
WORK=$(mktemp -d /tmp/namesrv-warm.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
[ -n "${NS_BIN_PREBUILT:-}" ] || (cd "$ROOT" && cargo build --release --locked -p namesrv --bin namesrv -p namesrv-bench -p nsadmin >&2)
BIN=$ROOT/target/release

start() { # NAME WARM -> NS_PID, ADDR
    mkdir -p "$WORK/$1"
    env -u RUST_LOG $(env | grep -o '^NAMESRV_[A-Z_]*' | sed 's/^/-u /') \
        RUST_LOG=info,namesrv::registry::snapshot_file=debug NAMESRV_HTTP_LISTEN= \
        NAMESRV_MAX_TOPICS_TOTAL=5000000 NAMESRV_WARM_RESTART="$2" \
        NAMESRV_KV_CONFIG_PATH="$WORK/$1/kvConfig.json" NAMESRV_CONFIG_STORE_PATH="$WORK/$1/namesrv.properties" \
        "$BIN/namesrv" --listen 127.0.0.1:0 >> "$WORK/$1/namesrv.log" 2>&1 &
    NS_PID=$!
    PIDS+=("$NS_PID")
    ADDR=
    for _ in $(seq 200); do
        ADDR=$(grep -so "listening addr=[0-9.:]*" "$WORK/$1/namesrv.log" | tail -1 | cut -d= -f2 || true)
        [ -n "$ADDR" ] && break
        sleep 0.05
    done
    [ -n "$ADDR" ] || { cat "$WORK/$1/namesrv.log"; exit 1; }
}
shape=(--clusters 1 --brokers 20 --topics "$TOPICS" --queues 8)

# 1. Route p99 with and without the snapshot.
for warm in true false; do
    start "route-$warm" "$warm"
    "$BIN/namesrv-bench" --addr "$ADDR" --json route "${shape[@]}" --connections 16 --depth 8 --warmup 1 \
        --duration 15 2> /dev/null > "$WORK/route-$warm.json"
    kill "$NS_PID"; wait "$NS_PID" 2>/dev/null || true
    python3 - "$warm" "$WORK/route-$warm.json" "$WORK/route-$warm/namesrv.log" <<'PY'
import json, re, sys
warm, report, log = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
writes = re.findall(r'route snapshot written .*?bytes=(\d+) elapsed_ms=(\d+)', log)
r = report["route"]
print(f"warm_restart={warm}: route QPS {r['per_second']:,.0f}, p99 {r['p99_us'] / 1000:.2f} ms, "
      f"p999 {r['p999_us'] / 1000:.2f} ms, max {r['max_us'] / 1000:.1f} ms; snapshots written: "
      + (", ".join(f"{int(b):,} bytes in {ms} ms" for b, ms in writes) or "none"))
PY
done

# 2. SIGTERM with the brokers registered, then a restart on the same state directory.
start restart true
"$BIN/namesrv-bench" --addr "$ADDR" populate "${shape[@]}" --hold 600 2> "$WORK/populate.log" > /dev/null &
PIDS+=($!)
for _ in $(seq 600); do grep -q "\[populate\] 20/20" "$WORK/populate.log" && break; sleep 0.2; done
kill -TERM "$NS_PID"; wait "$NS_PID" 2>/dev/null || true
grep -o "route snapshot written at shutdown.*" "$WORK/restart/namesrv.log" | tail -1
cp "$WORK/restart/routeSnapshot.json" "$WORK/restart/kvConfig.json" "$WORK/restart-2/" 2> /dev/null \
    || { mkdir -p "$WORK/restart-2"; cp "$WORK/restart/routeSnapshot.json" "$WORK/restart-2/"; }
begin=$(date +%s%N)
start restart-2 true
until "$BIN/nsadmin" topicRoute -t "BenchTopic-c0-b19-$((TOPICS - 1))" -n "$ADDR" > /dev/null 2>&1; do :; done
end=$(date +%s%N)
grep -o "route snapshot loaded.*" "$WORK/restart-2/namesrv.log" | tail -1
echo "restart to first route (process start to a route answered): $(( (end - begin) / 1000000 )) ms"
