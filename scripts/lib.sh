# Shared by scripts/observe.sh and scripts/status-page.sh (sourced, not run): a release namesrv on
# 127.0.0.1 with its state in a temporary directory, and the load that gives it something to show.
#
# Needs ROOT and WORK set by the caller; sets NS_PID, NS_ADDR (remoting) and HTTP_ADDR.

# Starts target/release/namesrv on 127.0.0.1:0 (remoting and HTTP), with only the settings given
# here: NAMESRV_* variables from the caller's environment are not read.
start_namesrv() {
    env -u RUST_LOG $(env | grep -o '^NAMESRV_[A-Z_]*' | sed 's/^/-u /') \
        NAMESRV_HTTP_LISTEN=127.0.0.1:0 NAMESRV_KV_CONFIG_PATH="$WORK/kvConfig.json" \
        NAMESRV_CONFIG_STORE_PATH="$WORK/namesrv.properties" NAMESRV_LOG_SUMMARY_SECS=10 \
        "$ROOT/target/release/namesrv" --listen 127.0.0.1:0 > "$WORK/namesrv.log" 2>&1 &
    NS_PID=$!
    NS_ADDR= HTTP_ADDR=
    for _ in $(seq 100); do
        NS_ADDR=$(grep -so "listening addr=[0-9.:]*" "$WORK/namesrv.log" | head -1 | cut -d= -f2 || true)
        HTTP_ADDR=$(grep -so "http endpoint up http_addr=[0-9.:]*" "$WORK/namesrv.log" | head -1 | cut -d= -f2 || true)
        [ -n "$NS_ADDR" ] && [ -n "$HTTP_ADDR" ] && return 0
        sleep 0.1
    done
    echo "namesrv did not start:" >&2
    cat "$WORK/namesrv.log" >&2
    return 1
}

# A TCP port free on 127.0.0.1 now, for servers that cannot be handed a listener (Prometheus).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until `curl -sf URL` answers, at most SECS seconds.
wait_http() { # URL SECS
    local deadline=$((SECONDS + $2))
    until curl -sf -o /dev/null "$1"; do
        [ $SECONDS -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
