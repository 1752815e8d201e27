#!/usr/bin/env bash
# Fuzzing of the peer-facing decoders (targets in tools/fuzz/src/targets.rs, corpora in
# tools/fuzz/corpus/<target>/).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   coverage-guided AFL++ runs (default 60 s each),
#                                                      one target at a time on one core; prints
#                                                      executions, edges and crashes per target
#   scripts/fuzz.sh --smoke [SECONDS_PER_TARGET]       what CI runs: replay every corpus, then seeded
#                                                      mutations in-process (default 6 s each); plain
#                                                      stable Rust, no AFL++ needed
#   scripts/fuzz.sh --seeds                            rewrite the seed-* corpus files from the fixtures
#   scripts/fuzz.sh --minimize [KEEP]                  fold the last run's finds into the corpora:
#                                                      afl-cmin, then at most KEEP (40) min-* files each
#
# cargo-afl (which builds its own AFL++) is used from PATH, or installed on first use into
# ~/.cache/namesrv-fuzz (FUZZ_CACHE); runs go to target/fuzz (FUZZ_OUT). Exits non-zero on any
# crash or hang.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CORPUS=$ROOT/tools/fuzz/corpus
DICTS=$ROOT/tools/fuzz/dict
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${FUZZ_OUT:-$TARGET_DIR/fuzz}
CACHE=${FUZZ_CACHE:-${HOME:-/root}/.cache/namesrv-fuzz}
TARGETS=(frame json_header binary_header register_body json_bodies properties update_config)

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

dict_for() {
    case "$1" in
        properties | update_config) echo "$DICTS/properties.dict" ;;
        *) echo "$DICTS/json.dict" ;;
    esac
}

# cargo-afl and the AFL++ it builds: a cargo-afl already on PATH (with its AFL++ under
# ~/.local/share/afl.rs) is used as it is; otherwise it is installed once into $CACHE, and
# XDG_DATA_HOME points cargo-afl at the AFL++ it built there.
setup_afl() {
    if [ -x "$CACHE/bin/cargo-afl" ] || ! cargo afl --version >/dev/null 2>&1; then
        export PATH=$CACHE/bin:$PATH XDG_DATA_HOME=$CACHE/share
    fi
    if ! cargo afl --version >/dev/null 2>&1; then
        log "installing cargo-afl into $CACHE (builds AFL++; about 5 minutes cold)"
        local start=$SECONDS
        cargo install cargo-afl --locked --version 0.18.2 --root "$CACHE"
        cargo afl config --build >/dev/null 2>&1 || true
        log "cargo-afl installed in $((SECONDS - start)) s"
    fi
    # afl-cmin finds afl-showmap on PATH: make it cargo-afl's AFL++, not another install.
    local afl_bin
    afl_bin=$(ls -d "${XDG_DATA_HOME:-$HOME/.local/share}"/afl.rs/rustc-*/afl.rs-*/afl/bin | tail -1)
    export PATH=$afl_bin:$PATH AFL_PATH=$afl_bin
    log "building the AFL++ harness (instrumented, release, debug assertions and overflow checks on)"
    CARGO_TARGET_DIR=$TARGET_DIR/afl cargo afl build --release --locked -p namesrv-fuzz --features afl --bin namesrv-afl
    BIN=$TARGET_DIR/afl/release/namesrv-afl
    export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_TRY_AFFINITY=1
}

stat_of() { awk -F' *: *' -v k="$2" '$1 == k { print $2 }' "$1"; }

fuzz() {
    local seconds=$1
    shift
    local targets=("$@")
    [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
    setup_afl
    mkdir -p "$OUT"
    local summary=$OUT/summary.tsv failed=0 total=0
    printf 'target\texecs_done\texecs_per_sec\tedges_found\ttotal_edges\tbitmap_cvg\tcorpus_count\tsaved_crashes\tsaved_hangs\n' >"$summary"
    for t in "${targets[@]}"; do
        log "fuzzing $t for $seconds s"
        rm -rf "${OUT:?}/$t"
        # -m: a 1 GiB address-space limit, so a decoder that allocates past its limits crashes.
        cargo afl fuzz -V "$seconds" -m 1024 -t 1000 -x "$(dict_for "$t")" -i "$CORPUS/$t" -o "$OUT/$t" -- "$BIN" "$t" \
            >"$OUT/$t.log" 2>&1 || { log "afl-fuzz failed for $t, see $OUT/$t.log"; tail -5 "$OUT/$t.log"; failed=1; continue; }
        local stats=$OUT/$t/default/fuzzer_stats
        local row=("$t")
        for k in execs_done execs_per_sec edges_found total_edges bitmap_cvg corpus_count saved_crashes saved_hangs; do
            row+=("$(stat_of "$stats" "$k")")
        done
        (IFS=$'\t'; echo "${row[*]}") >>"$summary"
        total=$((total + row[1]))
        if [ "${row[7]}" != 0 ] || [ "${row[8]}" != 0 ]; then
            failed=1
            log "$t: ${row[7]} crashes, ${row[8]} hangs in $OUT/$t/default/{crashes,hangs}"
        fi
    done
    column -t -s $'\t' "$summary"
    log "total executions: $total"
    return $failed
}

smoke() {
    local seconds=${1:-6}
    # The harness's own tests (seeds current, mutator bounded), in release to share the build.
    cargo test --release --locked -q -p namesrv-fuzz --lib
    cargo run --release --locked -q -p namesrv-fuzz --bin fuzz-smoke -- --seconds "$seconds" --crashes "$OUT/smoke-crashes"
}

minimize() {
    local keep=${1:-40}
    setup_afl
    for t in "${TARGETS[@]}"; do
        local queue=$OUT/$t/default/queue
        [ -d "$queue" ] || { log "$t: no run in $OUT, skipped"; continue; }
        local all=$OUT/$t.cmin-in min=$OUT/$t.cmin-out
        rm -rf "$all" "$min" && mkdir -p "$all"
        cp "$CORPUS/$t"/* "$all"/ && cp "$queue"/id:* "$all"/
        # The shell afl-cmin: the Python one finds no coverage with this persistent-mode harness.
        "$AFL_PATH/afl-cmin.bash" -m 1024 -t 1000 -i "$all" -o "$min" -- "$BIN" "$t" >"$OUT/$t.cmin.log" 2>&1
        rm -f "$CORPUS/$t"/min-*
        # The seeds stay; the smallest inputs that add coverage join them.
        local n=0
        while read -r f; do
            case "$(basename "$f")" in seed-*) continue ;; esac
            n=$((n + 1))
            cp "$f" "$CORPUS/$t/min-$(sha1sum "$f" | cut -c1-12)"
            [ $n -lt "$keep" ] || break
        done < <(find "$min" -type f -printf '%s %p\n' | sort -n | cut -d' ' -f2-)
        log "$t: $(find "$min" -type f | wc -l) inputs after afl-cmin, kept $n new ones"
    done
}

case "${1:-}" in
    --smoke) smoke "${2:-}" ;;
    --seeds) cargo run --locked -q -p namesrv-fuzz --bin fuzz-seeds ;;
    --minimize) minimize "${2:-}" ;;
    -h | --help) sed -n '2,17p' "$0" ;;
    *) fuzz "${1:-60}" "${@:2}" ;;
esac
