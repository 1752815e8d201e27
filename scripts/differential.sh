#!/usr/bin/env bash
# Long differential campaign: the seeded property test of tests/it/differential/ in release mode,
# once per seed, each with many sequences. Prints per seed how many sequences and steps ran and,
# when the server and the Java model disagree, the divergence with its shrunk minimal sequence.
#
# Usage: scripts/differential.sh [cases per seed] [seed...]
#   DIFF_EXPECT=spec            hold the server to Java plus every named exception
#   DIFF_PENDING_OFF=a,b        clear known-divergence switches (tests/it/differential/java_model/pending.rs)
#   DIFF_EXCEPTIONS_ON=c,d      add exceptions the server implements by now
# Exit status: 0 when every seed passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
cases="${1:-5000}"
shift || true
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(1 2 3 4)

cargo test --release --test it --no-run >/dev/null 2>&1 || {
    echo "build failed:" >&2
    cargo test --release --test it --no-run >&2
    exit 2
}
failed=0
for seed in "${seeds[@]}"; do
    log="$(mktemp)"
    start=$(date +%s)
    DIFF_CASES="$cases" DIFF_SEED="$seed" RUST_BACKTRACE=0 \
        cargo test --release --test it differential::server_answers -- --nocapture >"$log" 2>&1
    status=$?
    summary="$(grep -o 'differential: .*' "$log" | head -1)"
    [ "$seed" = "${seeds[0]}" ] && echo "held to: ${summary#*held to }"
    echo "== seed $seed: $(echo "${summary%, held to*}" | sed 's/^differential: //') in $(( $(date +%s) - start )) s"
    if [ $status -ne 0 ]; then
        failed=1
        echo "-- divergence:"
        sed -n '/Test failed:/,/successes:/p' "$log" | sed '$d'
    fi
    rm -f "$log"
done
exit $failed
