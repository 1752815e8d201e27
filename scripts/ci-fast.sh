#!/usr/bin/env bash
# The fast gate, the first thing CI runs and what a newcomer can run before every commit (a few
# minutes warm): formatting, lints, the structure check, the dashboard's units, every unit test,
# and the integration tests of the core paths (broker lifecycle over TCP, the captured wire
# samples). The extended checks (.ci/run after this) add the whole integration suite and the
# real-tool scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

step() { echo "== fast gate: $1 (at ${SECONDS} s)"; }

step "cargo fmt --check"
cargo fmt --check
step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "structure (import circles, layers, file and function sizes)"
python3 scripts/check-structure.py
step "dashboard units (one unit per axis)"
python3 scripts/check-dashboard.py --units
step "unit tests"
cargo test --workspace --locked --lib --bins
step "core integration tests"
cargo test --locked -p namesrv --test it -- broker_lifecycle:: wire_samples::
echo "== fast gate passed in ${SECONDS} s"
