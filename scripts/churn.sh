#!/usr/bin/env bash
# Churn soak: a release namesrv on 127.0.0.1 and `namesrv-bench churn` against it (brokers with
# new names on reused addresses, closing or going silent, compressed and plain bodies, route load
# alongside). Passes when, after the churn stops, no broker is listed within one broker timeout
# plus a scan, the server's RSS ends within 20% of its reference value, and its open files are
# back to the baseline. Prints the report; exits non-zero on failure.
#
# Usage: scripts/churn.sh [SECONDS] (default 60). Env: SLOTS (40), KEEP_LOGS=1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_TO_RUN=${1:-60}
SLOTS=${SLOTS:-40}
WORK=$(mktemp -d /tmp/namesrv-churn.XXXXXX)
NS_PID=

cleanup() {
    [ -n "$NS_PID" ] && kill "$NS_PID" 2>/dev/null && wait "$NS_PID" 2>/dev/null
    if [ "${KEEP_LOGS:-0}" = 1 ] || [ "${FAILED:-0}" = 1 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

(cd "$ROOT" && cargo build --release --locked -p namesrv --bin namesrv >&2 && cargo build --release --locked -p namesrv-bench >&2)
# Only the settings given here: NAMESRV_* variables from the caller's environment are not read.
env -u RUST_LOG $(env | grep -o '^NAMESRV_[A-Z_]*' | sed 's/^/-u /') \
    NAMESRV_HTTP_LISTEN= NAMESRV_KV_CONFIG_PATH="$WORK/kvConfig.json" NAMESRV_CONFIG_STORE_PATH="$WORK/namesrv.properties" \
    "$ROOT/target/release/namesrv" --listen 127.0.0.1:0 --scan-interval-ms 500 > "$WORK/namesrv.log" 2>&1 &
NS_PID=$!
for _ in $(seq 100); do
    ADDR=$(grep -o "listening addr=[0-9.:]*" "$WORK/namesrv.log" 2>/dev/null | head -1 | cut -d= -f2) && [ -n "$ADDR" ] && break
    sleep 0.1
done
[ -n "${ADDR:-}" ] || { echo "namesrv did not start"; cat "$WORK/namesrv.log"; FAILED=1; exit 1; }

REPORT=$("$ROOT/target/release/namesrv-bench" --addr "$ADDR" --json churn --slots "$SLOTS" \
    --duration "$SECONDS_TO_RUN" --broker-timeout-ms 2000 --scan-interval-ms 500 --server-pid "$NS_PID")
echo "$REPORT"
python3 - "$REPORT" <<'PY' || { FAILED=1; exit 1; }
import json, sys
r = json.loads(sys.argv[1])
problems = []
if r["leftover_brokers"]:
    problems.append(f"{r['leftover_brokers']} broker(s) still listed: {r['leftover'][:10]}")
if r["rss_ratio"] is not None and r["rss_ratio"] > 1.2:
    problems.append(f"RSS grew {r['rss_ratio']:.2f}x from {r['rss_kib_reference']} KiB")
if r["fds_end"] is not None and r["fds_end"] > r["fds_baseline"]:
    problems.append(f"open files {r['fds_end']} > baseline {r['fds_baseline']}")
if r["route"]["errors"]:
    problems.append(f"{r['route']['errors']} route queries failed")
print(f"churn: {r['incarnations']} incarnations, {r['registrations']} registrations, "
      f"{r['closed']} closed, {r['left_to_expire']} left to expire; settled in {r['settle_seconds']:.1f} s; "
      f"RSS {r['rss_kib_reference']} -> {r['rss_kib_end']} KiB; fds {r['fds_baseline']} -> {r['fds_end']}; "
      f"route p99 {r['route']['p99_us']} us")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
