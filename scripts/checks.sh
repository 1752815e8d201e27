# Shared by scripts/interop.sh and scripts/tls.sh (sourced, not run): timestamped log lines, and
# named checks counted in PASSED and FAILED, each check's output appended to $WORK/checks.log.
#
# Needs WORK set by the caller.
PASSED=0
FAILED=0

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

# Runs COMMAND and prints PASS or FAIL with NAME; on a failure also the last lines it printed,
# so that CI's output says why.
check() { # NAME COMMAND...
    local name=$1
    shift
    if "$@" >> "$WORK/checks.log" 2>&1; then
        PASSED=$((PASSED + 1))
        log "PASS $name"
    else
        FAILED=$((FAILED + 1))
        log "FAIL $name"
        tail -n 3 "$WORK/checks.log" | cut -c1-300 | sed 's/^/    /'
    fi
}
