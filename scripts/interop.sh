#!/usr/bin/env bash
# Interoperability checks: namesrv from this checkout against real RocketMQ peers from crates.io
# (rocketmq-rust 1.0.0: the broker `rocketmq-broker-rust` and a client built on
# rocketmq-client-rust, see interop/client). Everything runs on 127.0.0.1. Prints each check and
# a closing `N passed, M failed`; exits non-zero if any failed, keeping every process's log.
#
# Env: PEERS (peer install dir, default ~/.cache/rocketmq-peers), KEEP_LOGS=1 to keep logs always.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PEERS:-${HOME:-/root}/.cache/rocketmq-peers}
BROKER_BIN=$PEERS/bin/rocketmq-broker-rust
CLIENT_BIN=$PEERS/target/release/namesrv-interop-client
NSCTL="python3 $ROOT/scripts/nsctl.py"
WORK=$(mktemp -d /tmp/namesrv-interop.XXXXXX)
NS_BIN=${NS_BIN:-$ROOT/target/release/namesrv}
PIDS=()
PASSED=0
FAILED=0

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

cleanup() {
    for pid in "${PIDS[@]}"; do
        kill -CONT "$pid" 2>/dev/null
        kill -9 "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    if [ "$FAILED" -gt 0 ] || [ "${KEEP_LOGS:-0}" = 1 ]; then
        log "logs kept in $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

# --- install and build (cached) -------------------------------------------------------------
install_peers() {
    if [ ! -x "$BROKER_BIN" ]; then
        log "installing rocketmq-broker 1.0.0 into $PEERS (about 10 minutes cold)"
        CARGO_TARGET_DIR=$PEERS/target cargo install --root "$PEERS" rocketmq-broker --version 1.0.0 --locked \
            > "$WORK/install-broker.log" 2>&1 || { tail -20 "$WORK/install-broker.log"; return 1; }
    fi
    log "building the interop client"
    CARGO_TARGET_DIR=$PEERS/target cargo build --release --manifest-path "$ROOT/interop/client/Cargo.toml" \
        > "$WORK/build-client.log" 2>&1 || { tail -20 "$WORK/build-client.log"; return 1; }
    if [ -z "${NS_BIN_PREBUILT:-}" ]; then
        log "building namesrv (release)"
        (cd "$ROOT" && cargo build --release --bin namesrv) > "$WORK/build-namesrv.log" 2>&1 \
            || { tail -20 "$WORK/build-namesrv.log"; return 1; }
    fi
}

# --- processes ---------------------------------------------------------------------------------
wait_port() { # PORT SECS
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

declare -A NS_PID
start_namesrv() { # NAME PORT
    mkdir -p "$WORK/$1"
    NAMESRV_KV_CONFIG_PATH=$WORK/$1/kvConfig.json NAMESRV_CONFIG_STORE_PATH=$WORK/$1/namesrv.properties \
        "$NS_BIN" --listen "127.0.0.1:$2" --scan-interval-ms 500 --set broker_timeout_ms=15000 \
        >> "$WORK/$1.log" 2>&1 &
    NS_PID[$1]=$!
    PIDS+=($!)
    wait_port "$2" 10
}

declare -A BROKER_PID
start_broker() { # NAME PORT NAMESRV_ADDRS [VAR=VALUE...] ; extra toml via BROKER_EXTRA
    local name=$1 port=$2 ns=$3
    shift 3
    local dir=$WORK/$name
    mkdir -p "$dir/store"
    cat > "$dir/broker.toml" <<TOML
[broker]
namesrvAddr = "$ns"
brokerIp1 = "127.0.0.1"
brokerIp2 = "127.0.0.1"
listenPort = $port
storePathRootDir = "$dir/store"
autoCreateTopicEnable = true
autoCreateSubscriptionGroup = true
registerNameServerPeriod = 10000
compressedRegister = ${COMPRESSED:-false}

[broker.brokerServerConfig]
bindAddress = "127.0.0.1"

[broker.brokerIdentity]
brokerName = "$name"
brokerClusterName = "InteropCluster"
brokerId = 0

[store]
storeType = "LocalFile"
brokerRole = "ASYNC_MASTER"
storePathRootDir = "$dir/store"
haListenAddress = "127.0.0.1"
haListenPort = $((port + 1))
mappedFileSizeCommitLog = 67108864
maxHashSlotNum = 100000
maxIndexNum = 400000
TOML
    (cd "$dir" && exec env -u NAMESRV_ADDR ROCKETMQ_HOME="$dir" "$@" "$BROKER_BIN" -c broker.toml >> "$WORK/$name.log" 2>&1) &
    BROKER_PID[$name]=$!
    PIDS+=($!)
}

stop_broker() { # NAME SIGNAL
    kill "-$2" "${BROKER_PID[$1]}" 2>/dev/null
    [ "$2" = STOP ] || wait "${BROKER_PID[$1]}" 2>/dev/null
}

# --- checks ------------------------------------------------------------------------------------
check() { # NAME COMMAND...
    local name=$1
    shift
    if "$@" >> "$WORK/checks.log" 2>&1; then
        PASSED=$((PASSED + 1))
        log "PASS $name"
    else
        FAILED=$((FAILED + 1))
        log "FAIL $name"
    fi
}

broker_listed_with_topics() { # NS NAME
    $NSCTL wait-broker "$1" "$2" 30 && $NSCTL route "$1" TBW102 | grep -q "\"$2\"" && $NSCTL route "$1" "$2" > /dev/null
}

roundtrip() { # NS_ADDRS TOPIC GROUP
    timeout 120 "$CLIENT_BIN" roundtrip "$1" "$2" "$3" 20 60
}

gone_within() { # NS NAME SECS
    $NSCTL wait-gone "$1" "$2" "$3"
}

logged() { # FILE PATTERN
    grep -q "$2" "$1"
}

main() {
    install_peers || { FAILED=$((FAILED + 1)); echo "0 passed, $FAILED failed"; exit 1; }
    local ns=127.0.0.1:29876
    start_namesrv ns1 29876 || { log "namesrv did not start"; FAILED=1; echo "0 passed, 1 failed"; exit 1; }

    # 1. JSON headers: registers, listed with its topics; a client routes, produces, consumes.
    start_broker broker-json 30911 "$ns"
    check "broker registers with JSON headers and is listed with its topics" broker_listed_with_topics "$ns" broker-json
    check "client routes, produces 20 messages and consumes all of them" roundtrip "$ns" InteropTopic interop_group_1
    # SIGTERM: the broker unregisters itself.
    stop_broker broker-json TERM
    check "broker stopped with SIGTERM unregisters itself" \
        bash -c "$NSCTL wait-gone $ns broker-json 5 && grep -q 'reason=\"unregister request\"' $WORK/ns1.log"

    # 2. ROCKETMQ binary headers.
    start_broker broker-bin 31911 "$ns" ROCKETMQ_SERIALIZE_TYPE=ROCKETMQ
    check "broker registers with ROCKETMQ binary headers" broker_listed_with_topics "$ns" broker-bin
    # SIGKILL: the closed connection removes it at once.
    stop_broker broker-bin KILL
    check "broker killed with SIGKILL disappears at once" gone_within "$ns" broker-bin 3

    # 3. compressedRegister = true (raw deflate body).
    COMPRESSED=true start_broker broker-zip 32911 "$ns"
    check "broker registers with compressedRegister=true" broker_listed_with_topics "$ns" broker-zip
    # SIGSTOP: expires after the configured 15 s; SIGCONT: comes back. The broker registers every
    # 10 s, so at SIGSTOP its last registration is under 10 s old: still listed 4 s later, gone
    # within 15.5 s plus the 0.5 s scan.
    stop_broker broker-zip STOP
    check "broker frozen with SIGSTOP disappears after the expiry" \
        bash -c "! $NSCTL wait-gone $ns broker-zip 4 && $NSCTL wait-gone $ns broker-zip 20"
    kill -CONT "${BROKER_PID[broker-zip]}"
    check "broker comes back after SIGCONT" $NSCTL wait-broker "$ns" broker-zip 25
    stop_broker broker-zip TERM

    # 4. namesrv restarted: the broker re-registers within its period and clients recover.
    start_broker broker-r 33911 "$ns"
    $NSCTL wait-broker "$ns" broker-r 30 > /dev/null
    kill -9 "${NS_PID[ns1]}"
    wait "${NS_PID[ns1]}" 2>/dev/null
    start_namesrv ns1 29876
    check "after a namesrv restart the broker re-registers within its period" $NSCTL wait-broker "$ns" broker-r 25
    check "clients recover after a namesrv restart" roundtrip "$ns" RestartTopic interop_group_2
    stop_broker broker-r TERM

    # 5. three namesrvs: kill one, clients still route, produce and consume through the others.
    start_namesrv ns2 29877
    start_namesrv ns3 29878
    local all="127.0.0.1:29876;127.0.0.1:29877;127.0.0.1:29878"
    start_broker broker-m 34911 "$all"
    check "broker registers with all three namesrvs" bash -c \
        "$NSCTL wait-broker 127.0.0.1:29876 broker-m 30 && $NSCTL wait-broker 127.0.0.1:29877 broker-m 30 && $NSCTL wait-broker 127.0.0.1:29878 broker-m 30"
    kill -9 "${NS_PID[ns1]}"
    check "with one of three namesrvs killed, clients still produce and consume" roundtrip "$all" MultiTopic interop_group_3
    stop_broker broker-m TERM

    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

main "$@"
