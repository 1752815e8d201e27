#!/usr/bin/env bash
# Builds the namesrv container image, offline: a statically linked binary (the `dist` profile) is built on
# this host and copied into a `scratch` image (Containerfile). No base image is pulled, so the
# build works without network access to any registry.
#
#   scripts/build-image.sh [TAG]          default tag: namesrv:latest
#
# Uses podman, or docker when podman is absent and a docker engine answers. Prints the image
# size. The image is labelled with the binary's version, the git commit (full) and the
# repository (IMAGE_SOURCE, else the `origin` remote, else `unknown`), and keeps its
# HEALTHCHECK (`namesrv healthcheck`). Environment: TARGET (default: the host's *-linux-gnu triple; a *-linux-musl target works
# too where it is installed), CARGO_TARGET_DIR.
#
# Why not a multi-stage Containerfile with a Rust builder stage: its `FROM rust:...` needs a
# base image pull, which a machine without registry access cannot do. Where pulls work, the same
# binary can come from any builder: what the Containerfile needs is the context laid out below.
set -euo pipefail
cd "$(dirname "$0")/.."
TAG=${1:-namesrv:latest}

if command -v podman >/dev/null 2>&1; then
    ENGINE=podman
elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    ENGINE=docker
else
    echo "build-image: neither podman nor a docker engine is available" >&2
    exit 3
fi

HOST=$(rustc -vV | sed -n 's/^host: //p')
TARGET=${TARGET:-$HOST}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
echo "== static dist build for $TARGET"
# +crt-static links glibc (or musl) statically; with --target, RUSTFLAGS leave build scripts and
# proc macros alone. The `dist` profile is the release build optimised as one program (LTO).
# Symbols are stripped: the image is for running, `debug = 1` stays for local builds.
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
CARGO_PROFILE_DIST_DEBUG=0 CARGO_PROFILE_DIST_STRIP=symbols \
    cargo build --profile dist --locked --bin namesrv --target "$TARGET"
BIN="$TARGET_DIR/$TARGET/dist/namesrv"
if ldd "$BIN" 2>&1 | grep -qvE "not a dynamic executable|statically linked"; then
    echo "build-image: $BIN is not statically linked:" >&2
    ldd "$BIN" >&2
    exit 1
fi

CONTEXT=$(mktemp -d)
trap 'rm -rf "$CONTEXT"' EXIT
mkdir -p "$CONTEXT/rootfs/etc/namesrv" "$CONTEXT/rootfs/var/lib" "$CONTEXT/state"
cp "$BIN" "$CONTEXT/namesrv"
cp config/default.toml "$CONTEXT/rootfs/etc/namesrv/default.toml"
cp Containerfile "$CONTEXT/Containerfile"

# The labels: the version the binary reports, the commit checked out (full), the repository.
VERSION=$("$BIN" --version | awk '{print $2}')
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE=${IMAGE_SOURCE:-$(git remote get-url origin 2>/dev/null | sed -E 's#^git@([^:]+):#https://\1/#; s#\.git$##' || true)}
SOURCE=${SOURCE:-unknown}
LABELS=(--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" --build-arg "SOURCE=$SOURCE")

echo "== $ENGINE build -t $TAG (version $VERSION, revision $REVISION, source $SOURCE)"
ENGINE_ARGS=()
# podman: never pull (scratch is the only base), and the docker image format, the one that keeps
# the Containerfile's HEALTHCHECK (podman's default OCI format drops it with a warning).
[ "$ENGINE" = podman ] && ENGINE_ARGS=(--pull=never --format docker)
"$ENGINE" build "${ENGINE_ARGS[@]}" "${LABELS[@]}" -t "$TAG" -f "$CONTEXT/Containerfile" "$CONTEXT"
SIZE=$("$ENGINE" image inspect --format '{{.Size}}' "$TAG")
echo "image $TAG: $SIZE bytes ($((SIZE / 1024 / 1024)) MiB); binary $(stat -c %s "$BIN") bytes"
