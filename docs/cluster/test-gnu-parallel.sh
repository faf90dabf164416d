#!/usr/bin/env bash
# Runs gnu-parallel.sh on this machine and checks that the merged shards equal a
# single-machine run of the same tournament.
#
#   bash docs/cluster/test-gnu-parallel.sh   # KALAHA=/path/to/kalaha to test another binary
#
# - Installs Debian's parallel when it is missing (needs root and apt).
# - Runs the recipe with N=4 shards, two at a time, on a tournament of deterministic built-in
#   engines, then runs it a second time: every shard folder exists, so every shard resumes,
#   finds nothing left to play, and the merged standings must not change.
# - Plays the same tournament (same id and seed) on this machine alone and compares every
#   engine's wins, draws and losses, then the whole standings.csv and h2h.csv.
#
# Exit status: 0 when they are equal; 1 on any difference or failure. When GNU parallel
# cannot be installed it prints a line starting with "SKIP:" and exits 0.
set -euo pipefail

source "$(dirname "$0")/test-common.sh"

use_parallel

# Deterministic built-ins: first and greedy; medium and hard with a fixed depth and far more
# time than they need; random is seeded by the game id.
CONFIG="$WORK/tournament.toml"
cat >"$CONFIG" <<'TOML'
id = "parallel_check"
seed = 5
games = 8
tc = "5s"
opening_plies = 4

[[engine]]
builtin = "first"

[[engine]]
builtin = "greedy"

[[engine]]
builtin = "medium"
options = { depth = 3 }

[[engine]]
builtin = "hard"
options = { depth = 8 }

[[engine]]
builtin = "random"
TOML

export N=4 JOBS=2 RESULTS="$WORK/results" CONFIG
log "running gnu-parallel.sh with N=$N shards, $JOBS at a time"
bash "$HERE/gnu-parallel.sh" >"$WORK/run1.log" 2>&1 || {
    cat "$WORK/run1.log" >&2
    fail "gnu-parallel.sh failed"
}
for k in $(seq "$N"); do
    [ -f "$RESULTS/shard-$k/games.csv" ] || fail "shard $k wrote no games.csv"
    log "shard $k: $(($(wc -l <"$RESULTS/shard-$k/games.csv") - 1)) games"
done
cp -r "$RESULTS/merged" "$WORK/merged-first"
log "running gnu-parallel.sh again: every shard resumes"
bash "$HERE/gnu-parallel.sh" >"$WORK/run2.log" 2>&1 || {
    cat "$WORK/run2.log" >&2
    fail "gnu-parallel.sh failed on the second run"
}

"$KALAHA" tournament --config "$CONFIG" --out "$WORK/single" --quiet ||
    fail "the single-machine tournament failed"
"$KALAHA" ratings "$WORK/single" --out "$WORK/one" >/dev/null

wdl() { cut -d, -f2-6 "$1/standings.csv" | tail -n +2 | sort; }
log "engine,games,wins,draws,losses: single machine | merged shards"
paste -d'|' <(wdl "$WORK/one") <(wdl "$RESULTS/merged") | sed 's/^/test-gnu-parallel:   /'
[ "$(wdl "$WORK/one" | wc -l)" -eq 5 ] || fail "expected 5 engines in the standings"
diff <(wdl "$WORK/one") <(wdl "$RESULTS/merged") >/dev/null ||
    fail "wins, draws and losses of the merged shards differ from the single run"
for f in standings.csv h2h.csv; do
    diff "$WORK/one/$f" "$RESULTS/merged/$f" >&2 ||
        fail "$f of the merged shards differs from the single run"
    diff "$WORK/merged-first/$f" "$RESULTS/merged/$f" >&2 ||
        fail "$f changed when the finished shards were resumed"
done
log "PASS: the $N GNU parallel shards equal the single run"
