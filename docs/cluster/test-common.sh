# The preamble of the tests of the recipes, in one place: test-slurm.sh,
# test-slurm-sprt.sh, test-gnu-parallel.sh and test-gnu-parallel-sprt.sh source it right
# after `set -euo pipefail`. It defines:
#
# - TEST (the test's name: its script's, without .sh), HERE (this folder), ROOT (the
#   repository) and KALAHA, the absolute path of the binary tested ($KALAHA, by default
#   target/release/kalaha, built when it is missing);
# - log, skip and fail, which print a line with the test's name: skip a "SKIP:" line and
#   exits 0 (the scheduler cannot be installed or started here), fail a "FAIL:" line on
#   standard error and exits 1;
# - use_parallel: installs Debian's parallel when it is missing (needs root and apt; else
#   the test is skipped), then makes WORK, a temporary folder removed when the shell
#   exits, where `kalaha` (KALAHA) comes first in the PATH (the recipes call `kalaha`) and
#   HOME is a folder in which GNU parallel does not ask for a citation.
TEST=$(basename "$0" .sh)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KALAHA=${KALAHA:-$ROOT/target/release/kalaha}

log() { printf '%s: %s %s\n' "$TEST" "$(date +%T)" "$*"; }
skip() {
    printf 'SKIP: %s: %s\n' "$TEST" "$*"
    exit 0
}
fail() {
    printf 'FAIL: %s: %s\n' "$TEST" "$*" >&2
    exit 1
}

if [ ! -x "$KALAHA" ]; then
    log "building $KALAHA"
    (cd "$ROOT" && cargo build --release --quiet) || fail "cargo build --release failed"
fi
KALAHA=$(cd "$(dirname "$KALAHA")" && pwd)/$(basename "$KALAHA")

use_parallel() {
    if ! command -v parallel >/dev/null; then
        [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null ||
            skip "GNU parallel is not installed (apt-get install parallel)"
        log "installing parallel"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq parallel >/dev/null; } ||
            skip "apt-get could not install parallel"
    fi
    parallel --version 2>/dev/null | grep -q 'GNU parallel' || fail "parallel is not GNU parallel"
    WORK=$(mktemp -d "/tmp/kalaha-$TEST.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    mkdir -p "$WORK/bin" "$WORK/home/.parallel"
    ln -s "$KALAHA" "$WORK/bin/kalaha"
    touch "$WORK/home/.parallel/will-cite"
    export PATH="$WORK/bin:$PATH" HOME="$WORK/home"
}
