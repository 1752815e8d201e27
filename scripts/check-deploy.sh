#!/usr/bin/env bash
# Offline checks of what ships besides the binary (run by CI, a few seconds without the image):
#   1. deploy/kubernetes renders with `kubectl kustomize` and every rendered object passes
#      `kubernetes-validate --strict` against Kubernetes $K8S_VERSION, plus the properties the
#      manifests promise (scripts/check-k8s.py);
#   2. deploy/systemd/namesrv.service and the template namesrv@.service (as an instance) pass
#      `systemd-analyze verify` (exact files, in a scratch root holding the binary) and their
#      exposure levels are printed;
#   3. the process_* metrics are all there when /proc is mounted as the unit mounts it
#      (ProcSubset=pid: no /proc/stat): the binary runs under such a mount and is scraped;
#   4. with podman or a docker engine: scripts/build-image.sh builds the image; its OCI labels
#      (version, revision, source) and HEALTHCHECK are inspected; and the exported filesystem's
#      binary runs (chroot, as the image's non-root user, no environment): it checks its config,
#      serves, answers `namesrv healthcheck`, keeps state in /var/lib/namesrv, and stops on
#      SIGTERM (after which the health check fails).
# A tool that is missing is reported as skipped, which under CI=true fails the script (CI must
# check everything); a check that runs and fails exits 1.
#   scripts/check-deploy.sh [--no-image]
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION=${K8S_VERSION:-1.30.0}
IMAGE_TAG=${IMAGE_TAG:-namesrv:check}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
WORK=$(mktemp -d)
cleanup() {
    if [ -n "${NAMESRV_PID:-}" ]; then kill "$NAMESRV_PID" 2>/dev/null || true; fi
    if [ -n "${CONTAINER:-}" ]; then "$ENGINE" rm "$CONTAINER" >/dev/null 2>&1 || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
# A check that cannot run: a pass for a developer without the tool, a failure in CI.
skip() {
    echo "skipped: $1"
    if [ "${CI:-}" = true ]; then
        echo "check-deploy: a skipped check fails under CI=true" >&2
        exit 1
    fi
}

echo "== kubernetes: kustomize render + kubernetes-validate $K8S_VERSION"
if ! command -v kubectl >/dev/null; then
    skip "kubectl not found"
else
    kubectl kustomize deploy/kubernetes > "$WORK/rendered.yaml"
    if ! python3 -c "import kubernetes_validate" 2>/dev/null; then
        python3 -m pip install --quiet --disable-pip-version-check kubernetes-validate
    fi
    python3 -m kubernetes_validate --strict --quiet -k "$K8S_VERSION" "$WORK/rendered.yaml"
    python3 scripts/check-k8s.py "$WORK/rendered.yaml"
    echo "kubernetes: $(grep -c '^kind:' "$WORK/rendered.yaml") objects rendered and valid"
    # The optional components (PodMonitor, NetworkPolicy), rendered in an overlay of the base.
    mkdir -p "$WORK/overlay"
    BASE=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$PWD/deploy/kubernetes" "$WORK/overlay")
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n' "$BASE" > "$WORK/overlay/kustomization.yaml"
    # Every component; those patching another (*-external) after the rest.
    for c in deploy/kubernetes/components/*/; do
        case "$c" in *-external/) continue ;; esac
        echo "  - $BASE/components/$(basename "$c")" >> "$WORK/overlay/kustomization.yaml"
    done
    for c in deploy/kubernetes/components/*-external/; do
        [ -d "$c" ] || continue
        echo "  - $BASE/components/$(basename "$c")" >> "$WORK/overlay/kustomization.yaml"
    done
    kubectl kustomize "$WORK/overlay" > "$WORK/overlay.yaml"
    # kubernetes-validate knows the built-in kinds only: the PodMonitor (a CRD) is checked by
    # check-k8s.py alone.
    python3 - "$WORK/overlay.yaml" "$WORK/overlay-builtin.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] != "PodMonitor"]
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))
PY
    python3 -m kubernetes_validate --strict --quiet -k "$K8S_VERSION" "$WORK/overlay-builtin.yaml"
    python3 scripts/check-k8s.py "$WORK/overlay.yaml"
    grep -q '^kind: PodMonitor' "$WORK/overlay.yaml" && grep -q '^kind: NetworkPolicy' "$WORK/overlay.yaml" \
        || { echo "the optional components did not render"; exit 1; }
    # components/network-policy-external (after network-policy, by name) adds the ipBlock rule
    # for brokers outside the cluster.
    grep -q 'ipBlock:' "$WORK/overlay.yaml" || { echo "no ipBlock rule for brokers outside the cluster rendered"; exit 1; }
    echo "kubernetes: the optional components (PodMonitor, NetworkPolicy, its ipBlock rule) render and check"
fi

echo "== systemd: systemd-analyze verify"
BIN="$CARGO_TARGET_DIR/debug/namesrv"
if ! command -v systemd-analyze >/dev/null; then
    skip "systemd-analyze not found (Debian package: systemd)"
elif [ ! -x "$BIN" ]; then
    skip "$BIN not built (cargo build first)"
else
    ROOT="$WORK/root"
    mkdir -p "$ROOT/usr/local/bin" "$ROOT/etc/systemd/system/namesrv.service.d" "$ROOT/bin" "$ROOT/usr/lib/systemd"
    cp "$BIN" "$ROOT/usr/local/bin/namesrv"
    cp "$(type -P kill)" "$ROOT/bin/kill"
    cp -r /lib/systemd/system "$ROOT/usr/lib/systemd/"
    cp deploy/systemd/namesrv.service "$ROOT/etc/systemd/system/"
    # With the optional credentials drop-in, which verify reads as systemd would.
    cp deploy/systemd/credentials.conf "$ROOT/etc/systemd/system/namesrv.service.d/"
    # verify exits 0 on unknown keys and bad values, only printing them: any output fails.
    OUT=$(systemd-analyze verify --root="$ROOT" namesrv.service 2>&1) || { echo "$OUT"; exit 1; }
    if [ -n "$OUT" ]; then echo "$OUT"; exit 1; fi
    echo "systemd: namesrv.service (with the credentials drop-in) verified;" \
        "$(systemd-analyze security --offline=true --root="$ROOT" namesrv.service 2>&1 | grep -o 'Overall exposure level.*')"
    # The template, as an instance (namesrv@check: /etc/namesrv/check.toml, /var/lib/namesrv/check),
    # with the drop-in for every instance.
    mkdir -p "$ROOT/etc/systemd/system/namesrv@.service.d"
    cp deploy/systemd/namesrv@.service "$ROOT/etc/systemd/system/"
    cp deploy/systemd/credentials.conf "$ROOT/etc/systemd/system/namesrv@.service.d/"
    OUT=$(systemd-analyze verify --root="$ROOT" namesrv@check.service 2>&1) || { echo "$OUT"; exit 1; }
    if [ -n "$OUT" ]; then echo "$OUT"; exit 1; fi
    grep -q '^ExecStart=.* -c /etc/namesrv/%i.toml$' deploy/systemd/namesrv@.service \
        && grep -q '^StateDirectory=namesrv/%i$' deploy/systemd/namesrv@.service \
        || { echo "namesrv@.service: the instance must pick /etc/namesrv/%i.toml and StateDirectory=namesrv/%i"; exit 1; }
    echo "systemd: namesrv@.service (instance namesrv@check, with the credentials drop-in) verified;" \
        "$(systemd-analyze security --offline=true --root="$ROOT" namesrv@check.service 2>&1 | grep -o 'Overall exposure level.*')"
fi

echo "== systemd: the process_* metrics under ProcSubset=pid"
# The unit mounts /proc with subset=pid (ProcSubset=pid, ProtectProc=invisible): /proc/stat and
# the other system-wide files are hidden. The binary runs under such a mount (a new mount and PID
# namespace; unprivileged through a user namespace, as root without one) and its /metrics must
# still hold every process_* figure, with sane values.
if ! command -v unshare >/dev/null || [ ! -x "$BIN" ]; then
    skip "unshare (util-linux) or $BIN missing"
else
    USERNS=()
    [ "$(id -u)" = 0 ] || USERNS=(--user --map-root-user)
    mkdir -p "$WORK/procsubset"
    # shellcheck disable=SC2016 # expanded by the shell inside the namespace
    unshare "${USERNS[@]}" --mount --pid --fork --kill-child sh -c '
        mount -t proc -o subset=pid,hidepid=invisible proc /proc || exit 97
        [ ! -e /proc/stat ] || exit 98
        exec env -u RUST_LOG NAMESRV_HTTP_LISTEN=127.0.0.1:0 NAMESRV_KV_CONFIG_PATH="$1/kvConfig.json" \
            NAMESRV_CONFIG_STORE_PATH="$1/namesrv.properties" "$2" --listen 127.0.0.1:0' \
        sh "$WORK/procsubset" "$BIN" > "$WORK/procsubset/serve.log" 2>&1 &
    NAMESRV_PID=$!
    HTTP=""
    for _ in $(seq 1 100); do
        HTTP=$(grep -so "http endpoint up http_addr=[0-9.:]*" "$WORK/procsubset/serve.log" | head -1 | cut -d= -f2 || true)
        [ -n "$HTTP" ] && break
        kill -0 "$NAMESRV_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$HTTP" ]; then
        wait "$NAMESRV_PID" && rc=0 || rc=$?
        NAMESRV_PID=""
        cat "$WORK/procsubset/serve.log"
        case $rc in
            97) skip "cannot mount /proc with subset=pid here (no user namespaces, or a kernel before 5.8)" ;;
            98) echo "/proc/stat is visible under subset=pid"; exit 1 ;;
            *) echo "namesrv did not serve under a subset=pid /proc (exit $rc)"; exit 1 ;;
        esac
    else
        curl -sf "http://$HTTP/metrics" > "$WORK/procsubset/metrics.txt"
        # unshare ignores SIGTERM while it waits: the server (its child, PID 1 inside) is told.
        kill "$(ps -o pid= --ppid "$NAMESRV_PID")"
        wait "$NAMESRV_PID" 2>/dev/null || true
        NAMESRV_PID=""
        python3 - "$WORK/procsubset/metrics.txt" <<'PY'
import sys, time
values = {}
for line in open(sys.argv[1]):
    if line and not line.startswith("#"):
        name, _, value = line.rpartition(" ")
        values[name] = float(value)
now = time.time()
checks = {
    "process_cpu_seconds_total": lambda v: 0 <= v < 3600,
    "process_resident_memory_bytes": lambda v: 1 << 20 <= v < 1 << 34,
    "process_virtual_memory_bytes": lambda v: v > 0,
    "process_open_fds": lambda v: 3 <= v < 10_000,
    "process_max_fds": lambda v: v > 0,
    "process_start_time_seconds": lambda v: now - 120 < v <= now + 1,
}
bad = [f"{n}={values.get(n)}" for n, ok in checks.items() if n not in values or not ok(values[n])]
if bad:
    sys.exit("process figures missing or not sane under subset=pid: " + ", ".join(bad))
print("systemd: under a subset=pid /proc, " + ", ".join(f"{n}={values[n]:g}" for n in checks))
PY
    fi
fi

echo "== container image"
ENGINE=""
if command -v podman >/dev/null; then
    ENGINE=podman
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    ENGINE=docker
fi
if [ "${1:-}" = "--no-image" ]; then
    skip "--no-image"
elif [ -z "$ENGINE" ]; then
    skip "neither podman nor a docker engine is available"
else
    bash scripts/build-image.sh "$IMAGE_TAG"
    CONTAINER=$("$ENGINE" create "$IMAGE_TAG")
    ROOTFS="$WORK/rootfs"
    mkdir -p "$ROOTFS"
    "$ENGINE" export "$CONTAINER" | tar -x -C "$ROOTFS"
    ENTRY=$("$ENGINE" image inspect --format '{{json .Config.Entrypoint}} {{.Config.User}}' "$IMAGE_TAG")
    [ "$ENTRY" = '["/usr/local/bin/namesrv"] 65532:65532' ] || { echo "unexpected entrypoint/user: $ENTRY"; exit 1; }
    [ "$(stat -c %u "$ROOTFS/var/lib/namesrv")" = 65532 ] || { echo "/var/lib/namesrv is not the user's"; exit 1; }
    # The OCI labels name the binary's version, the commit checked out and a source.
    label() { "$ENGINE" image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$IMAGE_TAG"; }
    WANT_VERSION=$("$ROOTFS/usr/local/bin/namesrv" --version | awk '{print $2}')
    WANT_REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    [ "$(label version)" = "$WANT_VERSION" ] || { echo "label version: '$(label version)', binary: $WANT_VERSION"; exit 1; }
    [ "$(label revision)" = "$WANT_REVISION" ] || { echo "label revision: '$(label revision)', HEAD: $WANT_REVISION"; exit 1; }
    [ -n "$(label source)" ] || { echo "label source is empty"; exit 1; }
    # The HEALTHCHECK survived the build (the docker format keeps it) and runs the binary itself.
    HEALTH=$("$ENGINE" image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE_TAG")
    case "$HEALTH" in
        *'"/usr/local/bin/namesrv","healthcheck"'*) ;;
        *) echo "no HEALTHCHECK running namesrv healthcheck in the image: $HEALTH"; exit 1 ;;
    esac
    echo "image: labels version=$(label version) revision=$(label revision) source=$(label source); HEALTHCHECK kept"
    if [ "$(id -u)" != 0 ]; then skip "image built; running its binary needs chroot (root)"; exit 0; fi
    # As the image runs it: its user, no environment, its own filesystem only.
    env -i "$(command -v chroot)" --userspec=65532:65532 "$ROOTFS" /usr/local/bin/namesrv --check-config \
        --listen 127.0.0.1:0 > "$WORK/check.out"
    grep -q "kv_config_path /var/lib/namesrv/kvConfig.json" "$WORK/check.out" || { cat "$WORK/check.out"; exit 1; }
    env -i "$(command -v chroot)" --userspec=65532:65532 "$ROOTFS" /usr/local/bin/namesrv \
        --listen 127.0.0.1:0 2> "$WORK/serve.log" &
    NAMESRV_PID=$!
    for _ in $(seq 1 100); do grep -q "listening" "$WORK/serve.log" && break; sleep 0.1; done
    ADDR=$(sed -n 's/.*listening addr=\([^ ]*\).*/\1/p' "$WORK/serve.log")
    [ -n "$ADDR" ] || { cat "$WORK/serve.log"; exit 1; }
    cargo run -q --release -p nsadmin -- updateKvConfig -n "$ADDR" -s image-check -k key -v value
    # The health check as the image runs it: healthy while serving, unhealthy once stopped.
    env -i "$(command -v chroot)" --userspec=65532:65532 "$ROOTFS" /usr/local/bin/namesrv healthcheck --addr "$ADDR"
    kill -TERM "$NAMESRV_PID"
    wait "$NAMESRV_PID"
    NAMESRV_PID=""
    if env -i "$(command -v chroot)" --userspec=65532:65532 "$ROOTFS" /usr/local/bin/namesrv healthcheck \
        --addr "$ADDR" --timeout-ms 500 2>/dev/null; then
        echo "healthcheck says healthy with the server stopped"; exit 1
    fi
    grep -q '"image-check"' "$ROOTFS/var/lib/namesrv/kvConfig.json" || { cat "$WORK/serve.log"; exit 1; }
    echo "image: $IMAGE_TAG built; its binary checked its config, served at $ADDR, was healthy," \
        "kept state in /var/lib/namesrv and stopped cleanly"
fi
