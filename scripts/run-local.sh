#!/usr/bin/env bash
# Runs a release namesrv on 127.0.0.1:9876 with debug logs, so the actor mailboxes show.
# Usage: scripts/run-local.sh [extra namesrv flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
RUST_LOG="${RUST_LOG:-namesrv=debug}" exec cargo run --release -- --listen 127.0.0.1:9876 "$@"
