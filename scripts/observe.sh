#!/usr/bin/env bash
# namesrv seen by real Prometheus tools (Debian package `prometheus`):
#   1. `promtool check metrics` lints /metrics as a plain scrape gets it (text format 0.0.4);
#   2. a Prometheus server scrapes namesrv every second (it negotiates OpenMetrics) while six
#      brokers of two clusters are registered and clients ask for routes (scripts/demo_load.py);
#      PromQL through Prometheus's HTTP API must give namesrv_brokers == 6, namesrv_clusters == 2
#      and a non-zero rate of route requests, and the scrape target must be up with no error;
#   3. the shipped alert rules (deploy/prometheus) pass `promtool check rules` and their unit
#      tests (`promtool test rules`), and every metric the rules and the Grafana dashboard
#      (deploy/grafana) use is in the live scrape, every dashboard query accepted by Prometheus.
# Prints what it checked and the query results; exits non-zero on the first failure, keeping logs.
#
# Env: NS_BIN_PREBUILT=1 skips the release build; KEEP_LOGS=1 keeps the logs always.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/namesrv-observe.XXXXXX)
NS_PID= LOAD_PID= PROM_PID=
FAILED=1
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

cleanup() {
    for pid in $LOAD_PID $PROM_PID $NS_PID; do
        { kill "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    if [ "$FAILED" = 1 ] || [ "${KEEP_LOGS:-0}" = 1 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

command -v promtool > /dev/null && command -v prometheus > /dev/null \
    || { echo "observe: promtool and prometheus are needed (apt-get install prometheus)"; exit 1; }
[ -n "${NS_BIN_PREBUILT:-}" ] || (cd "$ROOT" && cargo build --release --locked -p namesrv --bin namesrv >&2)

start_namesrv
python3 "$ROOT/scripts/demo_load.py" "$NS_ADDR" 60 --rate 200 > "$WORK/load.log" 2>&1 &
LOAD_PID=$!
for _ in $(seq 50); do grep -q registered "$WORK/load.log" && break; sleep 0.1; done
grep -q registered "$WORK/load.log" || { echo "observe: the brokers did not register"; cat "$WORK/load.log"; exit 1; }

# 1. promtool on a plain scrape (no Accept header: the classic text format).
curl -sf "http://$HTTP_ADDR/metrics" > "$WORK/metrics.txt"
if ! promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.log" 2>&1; then
    echo "observe: promtool check metrics failed:"
    cat "$WORK/promtool.log"
    exit 1
fi
echo "promtool check metrics: clean ($(grep -vc '^#' "$WORK/metrics.txt") series, $(grep -c '^# TYPE' "$WORK/metrics.txt") families)"

# 2. Prometheus scraping every second.
cat > "$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: namesrv
    static_configs:
      - targets: ['$HTTP_ADDR']
YAML
promtool check config "$WORK/prometheus.yml" > /dev/null
for attempt in 1 2 3; do
    PROM=127.0.0.1:$(free_port)
    prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
        --web.listen-address="$PROM" --log.level=warn > "$WORK/prometheus.log" 2>&1 &
    PROM_PID=$!
    wait_http "http://$PROM/-/ready" 20 && break
    kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null || true
    PROM_PID=
    echo "observe: prometheus did not start on $PROM (attempt $attempt)"
done
[ -n "$PROM_PID" ] || { cat "$WORK/prometheus.log"; exit 1; }

# PromQL instant query: prints the first result's value, or nothing.
query() {
    curl -sf "http://$PROM/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2> /dev/null || true
}

RATE_QUERY='sum(rate(namesrv_requests_total{code="GET_ROUTEINFO_BY_TOPIC"}[10s]))'
deadline=$((SECONDS + 40))
while :; do
    brokers=$(query namesrv_brokers) clusters=$(query namesrv_clusters) rate=$(query "$RATE_QUERY")
    if [ "$brokers" = 6 ] && [ "$clusters" = 2 ] && python3 -c "import sys; sys.exit(0 if float('${rate:-0}') > 0 else 1)"; then
        break
    fi
    [ $SECONDS -lt $deadline ] || {
        echo "observe: after 40 s namesrv_brokers=${brokers:-none} namesrv_clusters=${clusters:-none} rate=${rate:-none}"
        exit 1
    }
    sleep 1
done
curl -sf "http://$PROM/api/v1/targets" > "$WORK/targets.json"
python3 - "$WORK/targets.json" <<'PY'
import json, sys
targets = json.load(open(sys.argv[1]))["data"]["activeTargets"]
t = targets[0]
print(f"prometheus target {t['scrapeUrl']}: health={t['health']} lastError={t['lastError']!r}")
sys.exit(0 if t["health"] == "up" and not t["lastError"] else 1)
PY
p99=$(query 'histogram_quantile(0.99, sum by (le) (rate(namesrv_request_duration_seconds_bucket{code="GET_ROUTEINFO_BY_TOPIC"}[10s])))')
echo "PromQL namesrv_brokers = $brokers"
echo "PromQL namesrv_clusters = $clusters"
echo "PromQL $RATE_QUERY = $rate"
echo "PromQL route p99 over 10 s = ${p99:-none} s"
# A loopback route query takes well under a millisecond: a p99 near the top bucket would mean
# the histogram's buckets are wrong, not the server slow.
python3 -c "import sys; sys.exit(0 if 0 < float('${p99:-0}') < 0.1 else 1)" \
    || { echo "observe: route p99 ${p99:-none} s is not plausible"; exit 1; }

# 3. The alert rules and the dashboard against the real tools and the live server.
promtool check rules "$ROOT"/deploy/prometheus/*-rules.yml
(cd "$ROOT/deploy/prometheus" && promtool test rules ./*-rules.test.yml)
curl -sf "http://$HTTP_ADDR/metrics" > "$WORK/metrics-end.txt"
python3 "$ROOT/scripts/check-dashboard.py" "$WORK/metrics-end.txt" --prom "$PROM"
FAILED=0
echo "observe: passed"
