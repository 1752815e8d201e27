#!/usr/bin/env bash
# Interoperability checks: namesrv from this checkout against real RocketMQ peers from crates.io
# (rocketmq-rust 1.0.0: the broker `rocketmq-broker-rust` and a client built on
# rocketmq-client-rust, see interop/client), with and without access control (both peers
# signing their requests), and nsadmin's read subcommands against the rocketmq-rust NameServer
# `rocketmq-namesrv-rust`. Everything runs on 127.0.0.1. Prints each
# check and a closing `N passed, M failed`; exits non-zero if any failed, keeping every log.
#
# Env: PEERS (peer install dir, default ~/.cache/rocketmq-peers), KEEP_LOGS=1 to keep logs always.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PEERS:-${HOME:-/root}/.cache/rocketmq-peers}
BROKER_BIN=$PEERS/bin/rocketmq-broker-rust
PEER_NS_BIN=$PEERS/bin/rocketmq-namesrv-rust
CLIENT_BIN=$PEERS/target/release/namesrv-interop-client
WORK=$(mktemp -d /tmp/namesrv-interop.XXXXXX)
# shellcheck source=scripts/checks.sh
. "$ROOT/scripts/checks.sh"
STORES= # the brokers' store directories, on a tmpfs when one can be had (see pick_store_root)
NS_BIN=${NS_BIN:-$ROOT/target/release/namesrv}
NSADMIN=${NSADMIN:-$ROOT/target/release/nsadmin}
PIDS=()

cleanup() {
    for pid in "${PIDS[@]}"; do
        kill -CONT "$pid" 2>/dev/null
        kill -9 "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    case $STORES in
        /dev/shm/*) rm -rf "$STORES" ;;
        "$WORK"/stores) umount "$STORES" 2>/dev/null ;;
    esac
    if [ "$FAILED" -gt 0 ]; then
        # What CI shows of a failed run: the end of every process's log.
        for f in "$WORK"/*.log; do
            [ -f "$f" ] || continue
            echo "--- last lines of $(basename "$f")"
            tail -n 4 "$f" | cut -c1-300
        done
    fi
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
    if [ ! -x "$PEER_NS_BIN" ]; then
        log "installing rocketmq-namesrv 1.0.0 into $PEERS (a few minutes after the broker)"
        CARGO_TARGET_DIR=$PEERS/target cargo install --root "$PEERS" rocketmq-namesrv --version 1.0.0 --locked \
            > "$WORK/install-namesrv.log" 2>&1 || { tail -20 "$WORK/install-namesrv.log"; return 1; }
    fi
    log "building the interop client"
    CARGO_TARGET_DIR=$PEERS/target cargo build --release --manifest-path "$ROOT/interop/client/Cargo.toml" \
        > "$WORK/build-client.log" 2>&1 || { tail -20 "$WORK/build-client.log"; return 1; }
    if [ -z "${NS_BIN_PREBUILT:-}" ]; then
        log "building namesrv and nsadmin (release)"
        (cd "$ROOT" && cargo build --release -p namesrv --bin namesrv && cargo build --release -p nsadmin) > "$WORK/build-namesrv.log" 2>&1 \
            || { tail -20 "$WORK/build-namesrv.log"; return 1; }
    elif [ ! -x "$NSADMIN" ]; then
        log "building nsadmin (release)"
        (cd "$ROOT" && cargo build --release -p nsadmin) > "$WORK/build-nsadmin.log" 2>&1 \
            || { tail -20 "$WORK/build-nsadmin.log"; return 1; }
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
start_namesrv() { # NAME PORT [HTTP_PORT [NAMESRV ARGS...]]
    local name=$1 port=$2 http=${3:-0}
    shift $(($# < 3 ? $# : 3))
    mkdir -p "$WORK/$name"
    NAMESRV_HTTP_LISTEN=127.0.0.1:$http NAMESRV_KV_CONFIG_PATH=$WORK/$name/kvConfig.json NAMESRV_CONFIG_STORE_PATH=$WORK/$name/namesrv.properties \
        "$NS_BIN" --listen "127.0.0.1:$port" --scan-interval-ms 500 --set broker_timeout_ms=15000 --set runtime_min_broker_timeout_ms=1000 "$@" \
        >> "$WORK/$name.log" 2>&1 &
    NS_PID[$name]=$!
    PIDS+=($!)
    wait_port "$port" 10
}

# Percent of the filesystem under DIR that is not available to us: (total - available) / total,
# the way the broker counts it.
used_percent() { # DIR
    df -P "$1" | awk 'NR == 2 { printf "%d", ($2 - $4) * 100 / $2 }'
}

# The broker marks its store full, refusing every write, once the filesystem under it is more
# than 90% used, counting blocks reserved for others and other tenants' files (a ratio it clamps
# to at most 90%, so no setting lifts it). A shared build machine's disk can be past that while
# `df` calls it mostly free, so the stores go on a tmpfs: /dev/shm when it has room, else one
# mounted for this run, else the work directory.
pick_store_root() {
    local shm_avail
    shm_avail=$(df -P /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
    if ! { [ "${shm_avail:-0}" -gt 2097152 ] && STORES=$(mktemp -d /dev/shm/namesrv-interop.XXXXXX 2>/dev/null); }; then
        STORES=$WORK/stores
        mkdir -p "$STORES"
        mount -t tmpfs -o size=2g tmpfs "$STORES" 2>/dev/null || true
    fi
    log "broker stores in $STORES ($(used_percent "$STORES")% of its filesystem in use; the broker refuses writes past 90%)"
}

# Every fixed port here (NameServers 29876-29884, brokers 2x911 and 3x911 with their fast and HA
# ports) stays below the kernel's ephemeral range (usually 32768-60999): a port inside it can be
# held by any outgoing connection of the run when the broker binds, and the broker then fails to
# start.
port_busy() { # PORT
    ss -Htln "sport = :$1" 2>/dev/null | grep -q .
}

declare -A BROKER_PID
start_broker() { # NAME PORT NAMESRV_ADDRS [VAR=VALUE...] ; extra toml via BROKER_EXTRA
    local name=$1 port=$2 ns=$3 p
    shift 3
    for p in $((port - 2)) "$port" $((port + 1)); do
        port_busy "$p" && log "port $p (for $name) is already in use: $name will fail to start"
    done
    local dir=$WORK/$name store=$STORES/$name
    mkdir -p "$dir" "$store"
    cat > "$dir/broker.toml" <<TOML
[broker]
namesrvAddr = "$ns"
brokerIp1 = "127.0.0.1"
brokerIp2 = "127.0.0.1"
listenPort = $port
storePathRootDir = "$store"
autoCreateTopicEnable = true
autoCreateSubscriptionGroup = true
registerNameServerPeriod = 10000
compressedRegister = ${COMPRESSED:-false}
${BROKER_EXTRA:-}

[broker.brokerServerConfig]
bindAddress = "127.0.0.1"

[broker.brokerIdentity]
brokerName = "$name"
brokerClusterName = "InteropCluster"
brokerId = 0

[store]
storeType = "LocalFile"
brokerRole = "ASYNC_MASTER"
storePathRootDir = "$store"
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
    [ "$2" = STOP ] || { wait "${BROKER_PID[$1]}" 2>/dev/null; rm -rf "${STORES:?}/$1"; }
}

# --- checks ------------------------------------------------------------------------------------
listed_within() { # NS NAME SECS
    "$NSADMIN" wait -n "$1" -b "$2" --timeout-secs "$3"
}

broker_listed_with_topics() { # NS NAME
    listed_within "$1" "$2" 30 && "$NSADMIN" topicRoute -n "$1" -t TBW102 --json | grep -q "\"$2\"" \
        && "$NSADMIN" topicRoute -n "$1" -t "$2" --json > /dev/null
}

roundtrip() { # NS_ADDRS TOPIC GROUP
    timeout 120 "$CLIENT_BIN" roundtrip "$1" "$2" "$3" 20 60
}

# The client given no name-server address: it asks the address server, Java's
# `http://{rocketmq.namesrv.domain}/rocketmq/{rocketmq.namesrv.domain.subgroup}` (rocketmq-rust
# reads both from environment variables of those literal names).
roundtrip_by_domain() { # HTTP_ADDR TOPIC GROUP COUNT TIMEOUT
    env -u NAMESRV_ADDR -u rocketmq.namesrv.addr -u rocketmq.rocketmq-namesrv.addr \
        "rocketmq.namesrv.domain=$1" rocketmq.namesrv.domain.subgroup=nsaddr \
        timeout $(($5 * 2)) "$CLIENT_BIN" roundtrip - "$2" "$3" "$4" "$5"
}

no_roundtrip_by_domain() { # HTTP_ADDR TOPIC GROUP COUNT TIMEOUT
    ! roundtrip_by_domain "$@"
}

gone_within() { # NS NAME SECS
    "$NSADMIN" wait -n "$1" -b "$2" --gone --timeout-secs "$3"
}

# Access control (section 7): nsadmin as the admin account, the client as the given account.
as_admin() { # FUNCTION ARGS...
    NSADMIN_ACCESS_KEY=interop-admin NSADMIN_SECRET_KEY=interop-admin-secret "$@"
}

signed_roundtrip() { # ACCESS_KEY SECRET NS TOPIC GROUP COUNT TIMEOUT
    INTEROP_ACCESS_KEY=$1 INTEROP_SECRET_KEY=$2 timeout $(($7 * 3)) "$CLIENT_BIN" roundtrip "$3" "$4" "$5" "$6" "$7"
}

no_signed_roundtrip() { ! signed_roundtrip "$@"; }

write_accounts() { # FILE
    cat > "$1" <<TOML
[[accounts]]
access_key = "interop-admin"
secret_key = "interop-admin-secret"
role = "admin"

[[accounts]]
access_key = "interop-broker"
secret_key = "interop-broker-secret"
role = "broker"
brokers = ["broker-acl"]

[[accounts]]
access_key = "interop-client"
secret_key = "interop-client-secret"
role = "client"
TOML
    chmod 600 "$1"
}

logged() { # FILE PATTERN
    grep -q "$2" "$1"
}

main() {
    install_peers || { FAILED=$((FAILED + 1)); echo "0 passed, $FAILED failed"; exit 1; }
    pick_store_root
    local ns=127.0.0.1:29876
    start_namesrv ns1 29876 || { log "namesrv did not start"; FAILED=1; echo "0 passed, 1 failed"; exit 1; }

    # 0. nsadmin's reads against the rocketmq-rust NameServer, and a diff between it and namesrv.
    check "nsadmin reads work against the rocketmq-rust NameServer" env \
        ROCKETMQ_PEERS="$PEERS" bash -c "cd '$ROOT' && cargo test -q --locked -p nsadmin --test peer -- --ignored --nocapture"

    # 1. JSON headers: registers, listed with its topics; a client routes, produces, consumes.
    start_broker broker-json 30911 "$ns"
    check "broker registers with JSON headers and is listed with its topics" broker_listed_with_topics "$ns" broker-json
    check "client routes, produces 20 messages and consumes all of them" roundtrip "$ns" InteropTopic interop_group_1
    # SIGTERM: the broker unregisters itself.
    stop_broker broker-json TERM
    check "broker stopped with SIGTERM unregisters itself" \
        bash -c "$NSADMIN wait -n $ns -b broker-json --gone --timeout-secs 5 && grep -q 'reason=\"unregister request\"' $WORK/ns1.log"

    # 2. ROCKETMQ binary headers.
    start_broker broker-bin 31911 "$ns" ROCKETMQ_SERIALIZE_TYPE=ROCKETMQ
    check "broker registers with ROCKETMQ binary headers" broker_listed_with_topics "$ns" broker-bin
    # SIGKILL: the closed connection removes it at once.
    stop_broker broker-bin KILL
    check "broker killed with SIGKILL disappears at once" gone_within "$ns" broker-bin 3

    # 3. compressedRegister = true (raw deflate body).
    COMPRESSED=true start_broker broker-zip 21911 "$ns"
    check "broker registers with compressedRegister=true" broker_listed_with_topics "$ns" broker-zip
    # SIGSTOP: expires after the configured 15 s; SIGCONT: comes back. The broker registers every
    # 10 s, so at SIGSTOP its last registration is under 10 s old: still listed 4 s later, gone
    # within 15.5 s plus the 0.5 s scan.
    stop_broker broker-zip STOP
    check "broker frozen with SIGSTOP disappears after the expiry" \
        bash -c "! $NSADMIN wait -n $ns -b broker-zip --gone --timeout-secs 4 && $NSADMIN wait -n $ns -b broker-zip --gone --timeout-secs 20"
    kill -CONT "${BROKER_PID[broker-zip]}"
    check "broker comes back after SIGCONT" listed_within "$ns" broker-zip 25
    stop_broker broker-zip TERM

    # 4. namesrv restarted: the broker re-registers within its period and clients recover.
    start_broker broker-r 22911 "$ns"
    listed_within "$ns" broker-r 30 > /dev/null
    kill -9 "${NS_PID[ns1]}"
    wait "${NS_PID[ns1]}" 2>/dev/null
    start_namesrv ns1 29876
    check "after a namesrv restart the broker re-registers within its period" listed_within "$ns" broker-r 25
    check "clients recover after a namesrv restart" roundtrip "$ns" RestartTopic interop_group_2
    stop_broker broker-r TERM

    # 5. three namesrvs: kill one, clients still route, produce and consume through the others.
    start_namesrv ns2 29877
    start_namesrv ns3 29878
    local all="127.0.0.1:29876;127.0.0.1:29877;127.0.0.1:29878"
    start_broker broker-m 23911 "$all"
    check "broker registers with all three namesrvs" bash -c \
        "$NSADMIN wait -n '127.0.0.1:29876;127.0.0.1:29877;127.0.0.1:29878' -b broker-m --timeout-secs 30"
    check "nsadmin diff finds no drift across the three namesrvs" "$NSADMIN" diff -n "$all"
    kill -9 "${NS_PID[ns1]}"
    check "with one of three namesrvs killed, clients still produce and consume" roundtrip "$all" MultiTopic interop_group_3
    stop_broker broker-m TERM

    # 6. The address server: a client with no name-server address finds namesrv through its HTTP
    #    endpoint's /rocketmq/nsaddr, then routes, produces and consumes. The control: pointed at
    #    an address server that is not there, the same client gets nowhere.
    start_namesrv ns4 29879 29880
    start_broker broker-w 24911 127.0.0.1:29879
    check "broker registers with the namesrv that serves the address server" listed_within 127.0.0.1:29879 broker-w 30
    check "GET /rocketmq/nsaddr answers namesrv's remoting address" \
        bash -c '[ "$(curl -sf http://127.0.0.1:29880/rocketmq/nsaddr)" = 127.0.0.1:29879 ]'
    check "a client with no name-server address finds namesrv through the address server, produces and consumes" \
        roundtrip_by_domain 127.0.0.1:29880 DomainTopic interop_group_4 20 60
    check "the same client pointed at no address server does not get through" \
        no_roundtrip_by_domain 127.0.0.1:29881 DomainTopic interop_group_5 1 10
    stop_broker broker-w TERM

    # 7. Access control on every code (acl_protect=all): the broker signs its registration with
    #    its innerClientAuthenticationCredentials, the client its route queries with
    #    AclClientRPCHook, and namesrv accepts both. Controls: unsigned or wrongly signed, they are
    #    refused. The checks read namesrv's log and counters, so they hold even if the broker
    #    does not stay up after registering.
    write_accounts "$WORK/accounts.toml"
    local acl_ns=127.0.0.1:29882
    start_namesrv ns5 29882 29883 --set acl_enabled=true --set "acl_accounts_file=$WORK/accounts.toml" \
        --set acl_protect=all
    BROKER_EXTRA="innerClientAuthenticationCredentials = '{\"accessKey\":\"interop-broker\",\"secretKey\":\"interop-broker-secret\"}'" \
        start_broker broker-acl 25911 "$acl_ns"
    check "access control on: a broker's registration signed with its credentials is accepted" \
        bash -c "sleep 8; grep -q 'broker registered broker=broker-acl' '$WORK/ns5.log' \
            && grep -q 'Register broker to name remoting_server success' '$WORK/broker-acl.log'"
    signed_roundtrip interop-client interop-client-secret "$acl_ns" AclTopic interop_group_6 1 10 >> "$WORK/checks.log" 2>&1
    check "access control on: a client's route queries signed with AclClientRPCHook are answered" bash -c \
        "curl -sf http://127.0.0.1:29883/metrics \
            | grep -Eq 'namesrv_requests_total\\{code=\"GET_ROUTEINFO_BY_TOPIC\",result=\"(SUCCESS|TOPIC_NOT_EXIST)\"\\} [1-9]'"
    check "access control on: nothing the signed broker and client sent was refused" \
        bash -c "! grep -q 'refused by access control' '$WORK/ns5.log'"
    start_broker broker-anon 26911 "$acl_ns"
    check "access control on: a broker without credentials is refused, and the refusal logged" \
        bash -c "sleep 5; grep 'refused by access control' '$WORK/ns5.log' | grep 'code=103' | grep -q 'no AccessKey' \
            && ! $NSADMIN clusterList -n $acl_ns --access-key interop-admin --secret-key interop-admin-secret | grep -q broker-anon"
    stop_broker broker-anon KILL
    check "access control on: an unsigned client gets no route" \
        no_signed_roundtrip "" "" "$acl_ns" AclTopic interop_group_7 1 10
    check "access control on: a client with a wrong secret gets no route" \
        no_signed_roundtrip interop-client wrong-secret "$acl_ns" AclTopic interop_group_8 1 10
    check "access control on: the refusals are counted by reason in /metrics" bash -c \
        "curl -sf http://127.0.0.1:29883/metrics > '$WORK/ns5.metrics' \
            && grep -Eq 'namesrv_acl_refusals_total\\{reason=\"bad_signature\"\\} [1-9]' '$WORK/ns5.metrics' \
            && grep -Eq 'namesrv_acl_refusals_total\\{reason=\"missing_access_key\"\\} [1-9]' '$WORK/ns5.metrics'"
    stop_broker broker-acl TERM

    # 8. With the default protection (acl_protect=admin) brokers need no credentials, so the same
    #    client, signing everything, produces and consumes through namesrv.
    start_namesrv ns6 29884 0 --set acl_enabled=true --set "acl_accounts_file=$WORK/accounts.toml"
    start_broker broker-admin 27911 127.0.0.1:29884
    check "access control on (admin): the broker registers unsigned" listed_within 127.0.0.1:29884 broker-admin 30
    check "access control on (admin): a client signing every request produces and consumes" \
        signed_roundtrip interop-client interop-client-secret 127.0.0.1:29884 AdminTopic interop_group_9 20 60
    # The unsigned broker's REGISTER_TOPIC_IN_NAMESRV (217, sent when a topic is created on it) is
    # an admin code: refused, and the topic comes with its next registration. Nothing else may be.
    check "access control on (admin): nothing but the unsigned broker's 217 was refused" \
        bash -c "! grep 'refused by access control' '$WORK/ns6.log' | grep -v 'code=217' | grep -q ."
    stop_broker broker-admin TERM

    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

main "$@"
