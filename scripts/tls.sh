#!/usr/bin/env bash
# TLS on the remoting port, seen by the real `openssl s_client` against a release namesrv, with a
# CA, server and client certificates made by `openssl` here:
#   1. permissive: s_client verifies the certificate (IP SAN 127.0.0.1) and gets an answer to
#      GET_BROKER_CLUSTER_INFO over TLS, and a plain client still gets one on the same port;
#   2. a client trusting another CA fails verification;
#   3. enforcing: TLS answered, a plain connection closed with one warning line;
#   4. disabled: a TLS ClientHello is closed with a warning that names it;
#   5. client certificates (tls_client_ca_file): without one no answer, with one an answer;
#   6. rotation: the certificate files replaced, new handshakes see the new certificate while a
#      connection opened before still answers.
# Prints each check and a closing `N passed, M failed`; exits non-zero if any failed, keeping logs.
#
# Env: NS_BIN_PREBUILT=1 skips the release build; KEEP_LOGS=1 keeps the logs always.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
WORK=$(mktemp -d /tmp/namesrv-tls.XXXXXX)
# shellcheck source=scripts/checks.sh
. "$ROOT/scripts/checks.sh"
NS_PID= HOLD_PID=

cleanup() {
    exec 7>&- 2>/dev/null
    for pid in $HOLD_PID $NS_PID; do
        { kill "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    if [ "$FAILED" -gt 0 ] || [ "${KEEP_LOGS:-0}" = 1 ]; then log "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# --- certificates -------------------------------------------------------------------------------
make_ca() { # NAME
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$1" \
        -keyout "$WORK/$1.key" -out "$WORK/$1.pem" 2>/dev/null
}

make_cert() { # CA NAME SAN EXTENDED_KEY_USAGE
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
        -keyout "$WORK/$2.key" -out "$WORK/$2.csr" 2>/dev/null
    printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$3" "$4" > "$WORK/$2.ext"
    openssl x509 -req -in "$WORK/$2.csr" -CA "$WORK/$1.pem" -CAkey "$WORK/$1.key" -CAcreateserial -days 2 \
        -extfile "$WORK/$2.ext" -out "$WORK/$2.pem" 2>/dev/null
}

# --- namesrv --------------------------------------------------------------------------------------
# Starts the release namesrv on 127.0.0.1:0 with only the settings given (NAMESRV_* variables from
# the caller's environment are not read); sets NS_ADDR.
start_namesrv() { # NAME --set ARGS...
    local name=$1
    shift
    mkdir -p "$WORK/$name"
    env -u RUST_LOG $(env | grep -o '^NAMESRV_[A-Z_]*' | sed 's/^/-u /') \
        "$BIN/namesrv" --listen 127.0.0.1:0 --set http_listen= --set "kv_config_path=$WORK/$name/kvConfig.json" \
        --set "config_store_path=$WORK/$name/namesrv.properties" --set security_reload_interval_ms=200 "$@" \
        > "$WORK/$name.log" 2>&1 &
    NS_PID=$!
    NS_ADDR=
    for _ in $(seq 100); do
        NS_ADDR=$(grep -so "listening addr=[0-9.:]*" "$WORK/$name.log" | head -1 | cut -d= -f2 || true)
        [ -n "$NS_ADDR" ] && return 0
        sleep 0.1
    done
    log "namesrv $name did not start:"
    cat "$WORK/$name.log"
    return 1
}

stop_namesrv() {
    { kill "$NS_PID" && wait "$NS_PID"; } 2>/dev/null || true
    NS_PID=
}

with_tls() { # NAME MODE [EXTRA --set ARGS]
    local name=$1 mode=$2
    shift 2
    start_namesrv "$name" --set "tls_mode=$mode" --set "tls_cert_file=$WORK/server.pem" \
        --set "tls_key_file=$WORK/server.key" "$@"
}

# One GET_BROKER_CLUSTER_INFO (106) frame with a JSON header, opaque $1.
frame() {
    python3 - "$1" <<'PY'
import json, struct, sys
header = json.dumps({"code": 106, "flag": 0, "language": "JAVA", "opaque": int(sys.argv[1]),
                     "serializeTypeCurrentRPC": "JSON", "version": 479}).encode()
sys.stdout.buffer.write(struct.pack(">II", 4 + len(header), len(header)) + header)
PY
}

# s_client sends one request and prints what came back (the handshake summary on stderr).
tls_request() { # CA [s_client ARGS...]
    local ca=$1
    shift
    { frame 7; sleep 1; } | timeout 10 openssl s_client -quiet -no_ign_eof -verify_return_error -CAfile "$WORK/$ca.pem" \
        -connect "$NS_ADDR" "$@"
}

answered() { # CA [s_client ARGS...]: a SUCCESS response to opaque 7 came back over TLS
    local out
    out=$(tls_request "$@" 2>/dev/null | tr -d '\0')
    grep -q '"opaque":7' <<< "$out" && grep -q '"code":0' <<< "$out"
}

not_answered() { ! answered "$@"; }

# A plain TCP client: one request, then the answer or the connection's end.
plain_request() {
    python3 - "$NS_ADDR" "$(frame 9 | base64 -w0)" <<'PY'
import base64, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=3)
s.sendall(base64.b64decode(sys.argv[2]))
data = b""
try:
    while b'"opaque":9' not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except (ConnectionResetError, socket.timeout):
    pass
sys.stdout.write("answered" if b'"opaque":9' in data else "closed")
PY
}

plain_answered() { [ "$(plain_request)" = answered ]; }
plain_closed() { [ "$(plain_request)" = closed ]; }

subject_cn() { # the CN of the certificate a new handshake presents
    timeout 10 openssl s_client -connect "$NS_ADDR" -CAfile "$WORK/ca.pem" < /dev/null 2>/dev/null \
        | openssl x509 -noout -subject -nameopt RFC2253 2>/dev/null | sed 's/^subject=//'
}

cn_is() { [ "$(subject_cn)" = "$1" ]; }

warned_once() { # LOG PATTERN: exactly one WARN line with PATTERN
    [ "$(grep WARN "$1" | grep -c "$2")" = 1 ]
}

main() {
    command -v openssl > /dev/null || { log "openssl is needed (apt-get install openssl)"; exit 1; }
    if [ -z "${NS_BIN_PREBUILT:-}" ]; then
        (cd "$ROOT" && cargo build --release --locked -p namesrv --bin namesrv) > "$WORK/build.log" 2>&1 \
            || { tail -20 "$WORK/build.log"; exit 1; }
    fi
    log "$(openssl version)"
    make_ca ca
    make_ca other-ca
    make_ca client-ca
    make_cert ca server "IP:127.0.0.1,DNS:localhost" serverAuth
    make_cert client-ca client "DNS:client" clientAuth

    # 1-2. permissive
    with_tls permissive permissive || exit 1
    check "permissive: s_client verifies the certificate and gets an answer over TLS" answered ca
    check "permissive: a plain client gets an answer on the same port" plain_answered
    check "a client trusting another CA fails verification" not_answered other-ca
    stop_namesrv

    # 3. enforcing
    with_tls enforcing enforcing || exit 1
    check "enforcing: s_client gets an answer over TLS" answered ca
    check "enforcing: a plain connection is closed" plain_closed
    check "enforcing: with one warning line" warned_once "$WORK/enforcing.log" "plain TCP while tls_mode is enforcing"
    stop_namesrv

    # 4. disabled
    start_namesrv disabled || exit 1
    check "disabled: s_client gets no answer" not_answered ca
    check "disabled: the ClientHello is named in one warning line" \
        warned_once "$WORK/disabled.log" "looks like a TLS ClientHello; TLS is disabled on this port"
    check "disabled: no 'frame too large' for it" bash -c "! grep -q 'frame too large' '$WORK/disabled.log'"
    check "disabled: a plain client gets an answer" plain_answered
    stop_namesrv

    # 5. client certificates
    with_tls mtls enforcing --set "tls_client_ca_file=$WORK/client-ca.pem" || exit 1
    check "client CA: s_client without a certificate gets no answer" not_answered ca
    check "client CA: s_client with a certificate from it gets an answer" \
        answered ca -cert "$WORK/client.pem" -key "$WORK/client.key"
    stop_namesrv

    # 6. rotation with a connection held open (requests written through a fifo).
    with_tls rotation permissive || exit 1
    mkfifo "$WORK/hold.in"
    timeout 60 openssl s_client -quiet -CAfile "$WORK/ca.pem" -connect "$NS_ADDR" \
        < "$WORK/hold.in" > "$WORK/hold.out" 2> "$WORK/hold.err" &
    HOLD_PID=$!
    exec 7> "$WORK/hold.in"
    frame 21 >&7
    check "rotation: before, new handshakes see the first certificate" cn_is CN=server
    make_cert ca server-2 "IP:127.0.0.1" serverAuth
    cp "$WORK/server-2.key" "$WORK/server.key.new" && cp "$WORK/server-2.pem" "$WORK/server.pem.new"
    mv "$WORK/server.key.new" "$WORK/server.key" && mv "$WORK/server.pem.new" "$WORK/server.pem"
    local rotated=
    for _ in $(seq 50); do
        cn_is CN=server-2 && { rotated=1; break; }
        sleep 0.2
    done
    check "rotation: new handshakes see the new certificate" [ -n "$rotated" ]
    check "rotation: the reload is logged" grep -q "TLS certificate reloaded" "$WORK/rotation.log"
    frame 22 >&7
    sleep 1
    check "rotation: the connection opened before still answers" \
        bash -c "grep -aq '\"opaque\":21' '$WORK/hold.out' && grep -aq '\"opaque\":22' '$WORK/hold.out'"
    exec 7>&-
    stop_namesrv

    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

main "$@"
