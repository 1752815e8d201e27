#!/usr/bin/env bash
# The status page in a real headless browser (Debian `chromium`, driven by playwright-core from
# npm): a release namesrv with six brokers of two clusters and route load (scripts/demo_load.py);
# scripts/status_page.mjs loads `/`, waits for the data, checks the broker, the topic, its route
# and the charts, and saves a screenshot; after a warm restart, scripts/status_page_provisional.mjs
# checks the brokers are marked as loaded from the route snapshot. Exits non-zero on failure,
# keeping the logs.
#
# Usage: scripts/status-page.sh [SCREENSHOT.png]  (default: in the temporary directory; the README's
# picture is docs/status-page.png, taken with HOLD_SECS=60 for a minute of chart). Env:
# NS_BIN_PREBUILT=1 skips the release build; KEEP_LOGS=1; HOLD_SECS (0) waits longer before the picture;
# PLAYWRIGHT_DIR (default ~/.cache/namesrv-browser), where playwright-core is installed if missing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/namesrv-status-page.XXXXXX)
SCREENSHOT=$(realpath -m "${1:-$WORK/status-page.png}")
PLAYWRIGHT_VERSION=1.65.1
export PLAYWRIGHT_DIR=${PLAYWRIGHT_DIR:-${HOME:-/root}/.cache/namesrv-browser}
NS_PID= LOAD_PID=
FAILED=1
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

cleanup() {
    for pid in $LOAD_PID $NS_PID; do
        { kill "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    if [ "$FAILED" = 1 ] || [ "${KEEP_LOGS:-0}" = 1 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

[ -x /usr/bin/chromium ] || { echo "status-page: /usr/bin/chromium is needed (apt-get install chromium)"; exit 1; }
command -v node > /dev/null || { echo "status-page: node is needed"; exit 1; }
if [ ! -f "$PLAYWRIGHT_DIR/node_modules/playwright-core/package.json" ] \
    || ! grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$PLAYWRIGHT_DIR/node_modules/playwright-core/package.json"; then
    mkdir -p "$PLAYWRIGHT_DIR"
    (cd "$PLAYWRIGHT_DIR" && npm_config_cache="${HOME:-/root}/.cache/npm" \
        npm install --no-audit --no-fund --no-save "playwright-core@$PLAYWRIGHT_VERSION" > "$WORK/npm.log" 2>&1) \
        || { cat "$WORK/npm.log"; exit 1; }
fi
[ -n "${NS_BIN_PREBUILT:-}" ] || (cd "$ROOT" && cargo build --release --locked -p namesrv --bin namesrv >&2)

start_namesrv
python3 "$ROOT/scripts/demo_load.py" "$NS_ADDR" 120 --rate 120 > "$WORK/load.log" 2>&1 &
LOAD_PID=$!
for _ in $(seq 50); do grep -q registered "$WORK/load.log" && break; sleep 0.1; done
grep -q registered "$WORK/load.log" || { echo "status-page: the brokers did not register"; cat "$WORK/load.log"; exit 1; }

node "$ROOT/scripts/status_page.mjs" "http://$HTTP_ADDR/" "$SCREENSHOT" broker-a OrderCreated

# A warm restart: SIGTERM writes the route snapshot before connections close; the brokers stop
# (the load ends) 2 s later, then the server starts again on the same state: the six brokers are
# provisional, marked on the page, silent since before the restart.
kill -TERM "$NS_PID" && wait "$NS_PID" || true
sleep 2
{ kill "$LOAD_PID" && wait "$LOAD_PID"; } 2>/dev/null || true  # it may have ended with the server
LOAD_PID=
mv "$WORK/namesrv.log" "$WORK/namesrv-first.log"
start_namesrv
node "$ROOT/scripts/status_page_provisional.mjs" "http://$HTTP_ADDR/" 6 2
echo "status-page: passed ($(du -k "$SCREENSHOT" | cut -f1) KiB screenshot)"
FAILED=0
