#!/usr/bin/env bash
# Hostile-load suite: each attack one peer can try, against a fresh release namesrv on
# 127.0.0.1, with a probe asking for a route every 20 ms and the server's RSS sampled. Passes when
# every attack stays within its bounds (peak RSS, the probe's worst latency, refusals).
#
# Usage: scripts/hostile.sh [ATTACK...] (default: all). Env: KEEP_LOGS=1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/namesrv-hostile.XXXXXX)
NS_PID=
FAILED=0

stop_server() { [ -n "$NS_PID" ] && kill "$NS_PID" 2>/dev/null && wait "$NS_PID" 2>/dev/null; NS_PID=; }
cleanup() {
    stop_server
    if [ "${KEEP_LOGS:-0}" = 1 ] || [ "$FAILED" != 0 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

[ "${SKIP_BUILD:-0}" = 1 ] || (cd "$ROOT" && cargo build --release --locked -p namesrv --bin namesrv >&2 && cargo build --release --locked -p namesrv-bench >&2)

start_server() { # NAME HTTP_LISTEN [nofile=N] [NAMESRV_KEY=VALUE...]
    local name=$1 http=$2 limit=() settings=()
    shift 2
    for option in "$@"; do
        case $option in
            nofile=*) limit=(prlimit "--nofile=${option#nofile=}:${option#nofile=}") ;;
            NAMESRV_*=*) settings+=("$option") ;;
        esac
    done
    mkdir -p "$WORK/$name"
    # Only the settings given here: NAMESRV_* variables from the caller's environment are not read.
    env -u RUST_LOG $(env | grep -o '^NAMESRV_[A-Z_]*' | sed 's/^/-u /') \
        NAMESRV_HTTP_LISTEN="$http" NAMESRV_KV_CONFIG_PATH="$WORK/$name/kvConfig.json" NAMESRV_CONFIG_STORE_PATH="$WORK/$name/namesrv.properties" \
        "${settings[@]}" ${limit[@]+"${limit[@]}"} "$ROOT/target/release/namesrv" --listen 127.0.0.1:0 > "$WORK/$name/namesrv.log" 2>&1 &
    NS_PID=$!
    ADDR= HTTP=
    for _ in $(seq 100); do
        ADDR=$(grep -o "listening addr=[0-9.:]*" "$WORK/$name/namesrv.log" 2>/dev/null | head -1 | cut -d= -f2) && [ -n "$ADDR" ] && break
        sleep 0.1
    done
    [ -n "$ADDR" ] || { echo "namesrv did not start"; cat "$WORK/$name/namesrv.log"; FAILED=1; exit 1; }
    HTTP=$(grep -o "http_addr=[0-9.:]*" "$WORK/$name/namesrv.log" | head -1 | cut -d= -f2)
}

# attack | seconds | max peak RSS MiB | max probe latency ms | extra check (python expression on r)
#   | server options: "http" (an HTTP endpoint), nofile=N (prlimit), NAMESRV_KEY=VALUE settings
# The attacks from 127.0.0.2 test the shares: the attacker is another source address than the
# probe and the honest peers, and is the one refused.
CASES=(
    "unread-206|12|300|1000|True|"
    "unread-route|10|100|1000|True|"
    "slowloris|12|450|1000|r['detail']['closed_by_server'] > 0|"
    "bombs|10|450|250|r['detail']['refused'] == r['detail']['bombs']|"
    "names|8|450|1000|r['detail']['all_refused']|"
    "kv|10|450|1000|r['detail']['big_value_refused'] and r['detail']['put_p50_ms'] < 50|"
    "listings|10|450|250|r['detail']['http_searches'] > 0 and r['detail']['remoting_listings'] > 0|http"
    "idle-prefixes|15|450|1000|r['detail']['registrations_ok'] == r['detail']['registrations']|NAMESRV_FRAME_PROGRESS_TIMEOUT_MS=2000"
    "unread-small|15|450|1000|r['detail']['registrations_ok'] == r['detail']['registrations']|"
    "idle-slots|15|200|1000|r['detail']['registrations_ok'] == 20 and r['detail']['clients_ok'] == 20|NAMESRV_MAX_CONNECTIONS=300 NAMESRV_FIRST_BYTE_TIMEOUT_MS=2000"
    "http-idle|10|200|1000|r['detail']['puts_ok'] == r['detail']['puts']|http nofile=256"
    "fan-out|20|600|1000|r['detail']['refused'] == 1 and r['detail']['honest_heartbeats_ok'] == r['detail']['honest_heartbeats']|"
    "listing-churn|15|600|1000|r['detail']['expired_after_ms'] <= 3000 + 1000 + 1500 and r['detail']['livez_failures'] == 0|http NAMESRV_SCAN_INTERVAL_MS=1000"
)
WANTED=("$@")
for case in "${CASES[@]}"; do
    IFS='|' read -r name seconds max_rss max_ms extra options <<< "$case"
    if [ ${#WANTED[@]} -gt 0 ] && [[ ! " ${WANTED[*]} " =~ " $name " ]]; then continue; fi
    read -ra options <<< "$options"
    http=
    [[ " ${options[*]-} " =~ " http " ]] && http=127.0.0.1:0
    start_server "$name" "$http" ${options[@]+"${options[@]}"}
    report=$("$ROOT/target/release/namesrv-bench" --addr "$ADDR" --json attack "$name" --seconds "$seconds" \
        --server-pid "$NS_PID" ${HTTP:+--http "$HTTP"} 2> "$WORK/$name/bench.err") || report='{"error": true}'
    stop_server
    echo "$report" > "$WORK/$name/report.json"
    python3 - "$name" "$max_rss" "$max_ms" "$extra" "$report" <<'PY' || FAILED=1
import json, sys
name, max_rss, max_ms, extra, text = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
r = json.loads(text)
if r.get("error"):
    print(f"FAIL {name}: the attack tool failed"); sys.exit(1)
rss = r["peak_rss_kib"] / 1024
problems = []
if rss > max_rss: problems.append(f"peak RSS {rss:.0f} MiB > {max_rss:.0f}")
if r["probe_max_ms"] > max_ms: problems.append(f"probe worst {r['probe_max_ms']:.0f} ms > {max_ms:.0f}")
if r["probe_errors"]: problems.append(f"{r['probe_errors']} probe failures")
if not eval(extra, {}, {"r": r}): problems.append(f"check failed: {extra}")
status = "FAIL" if problems else "ok  "
print(f"{status} {name:13} peak RSS {rss:6.1f} MiB, probe p99 {r['probe']['p99_us']/1000:7.2f} ms, worst {r['probe_max_ms']:8.2f} ms, {json.dumps(r['detail'])}")
for p in problems: print("     ", p)
sys.exit(1 if problems else 0)
PY
done
exit $FAILED
