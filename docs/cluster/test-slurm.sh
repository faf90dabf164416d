#!/usr/bin/env bash
# Runs slurm-array.sh on a real single-node Slurm started on this machine, and checks that
# the merged shards equal a single-machine run of the same tournament.
#
#   bash docs/cluster/test-slurm.sh        # KALAHA=/path/to/kalaha to test another binary
#
# - Installs Debian's slurm-wlm and munge when they are missing (needs root and apt).
# - Starts munged (unless one answers), then slurmctld and slurmd with a minimal slurm.conf
#   (one node, this machine, on ports 16817/16818; slurm-local.sh) in a temporary folder; stops what it
#   started when it ends.
# - Submits slurm-array.sh as an array job of 4 tasks (`sbatch --array=1-4`) on a tournament
#   of deterministic built-in engines, preempts one running task with
#   `scancel --signal=TERM` and requeues it: the task runs again and the recipe resumes its
#   shard.
# - Merges the shards with `kalaha ratings`, plays the same tournament (same id and seed) on
#   this machine alone, and compares every engine's wins, draws and losses, then the whole
#   standings.csv and h2h.csv.
#
# Exit status: 0 when they are equal; 1 on any difference or failure. When Slurm cannot be
# installed or started here it prints a line starting with "SKIP:" and exits 0.
set -euo pipefail

source "$(dirname "$0")/test-common.sh"
TASKS=4
SLURM_PORT=${SLURM_PORT:-16817}
TIMEOUT=${TIMEOUT:-300} # seconds for the array job

# --- Slurm and munge: a one-node Slurm on this machine (slurm-local.sh) ---------------
source "$HERE/slurm-local.sh"

# --- The tournament ----------------------------------------------------------------------
# Deterministic built-ins: first and greedy; medium and hard with a fixed depth and far more
# time than they need; random is seeded by the game id.
RESULTS="$WORK/results"
CONFIG="$WORK/tournament.toml"
cat >"$CONFIG" <<'EOF'
id = "slurm_check"
seed = 11
games = 16
tc = "5s"
opening_plies = 4

[[engine]]
builtin = "first"

[[engine]]
builtin = "greedy"

[[engine]]
builtin = "medium"
options = { depth = 2 }

[[engine]]
builtin = "hard"
options = { depth = 11 }

[[engine]]
builtin = "random"
EOF

games_in() {
    local f="$RESULTS/shard-$1/games.csv"
    if [ -f "$f" ]; then echo $(($(wc -l <"$f") - 1)); else echo 0; fi
}

JOB=$(sbatch --parsable --array=1-$TASKS --cpus-per-task=1 --time=10:00 \
    --chdir="$WORK" --output="$WORK/logs/kalaha-shard-%a.log" --open-mode=append \
    --export=ALL,RESULTS="$RESULTS",CONFIG="$CONFIG",KALAHA="$KALAHA" \
    "$HERE/slurm-array.sh") || fail "sbatch refused the array job"
JOB=${JOB%%;*}
log "submitted array job $JOB: sbatch --array=1-$TASKS docs/cluster/slurm-array.sh"

# Preempt the first task seen running with at least one game written.
VICTIM=""
deadline=$((SECONDS + 120))
while [ -z "$VICTIM" ]; do
    [ $SECONDS -lt $deadline ] || fail "no task was seen running with a game written"
    for k in $(seq $TASKS); do
        if [ "$(task_state "$k" | cut -d' ' -f1)" = RUNNING ] && [ "$(games_in "$k")" -ge 1 ]; then
            VICTIM=$k
            break
        fi
    done
    sleep 0.1
done
squeue -j "$JOB" -r -o '%.12i %.10T %.6C %R' | sed 's/^/test-slurm:   squeue: /'
scancel --signal=TERM --full "${JOB}_$VICTIM" || fail "scancel --signal=TERM ${JOB}_$VICTIM failed"
log "preempted task ${JOB}_$VICTIM with scancel --signal=TERM after $(games_in "$VICTIM") game(s)"
deadline=$((SECONDS + 60))
while [ "$(task_state "$VICTIM" | cut -d' ' -f1)" = RUNNING ]; do
    [ $SECONDS -lt $deadline ] || fail "task ${JOB}_$VICTIM still runs 60 s after SIGTERM"
    sleep 0.2
done
stopped=$(task_state "$VICTIM")
log "task ${JOB}_$VICTIM stopped: $stopped with $(games_in "$VICTIM") game(s) written"
[ "${stopped#* }" = "130:0" ] ||
    fail "task ${JOB}_$VICTIM ended with $stopped, not with exit code 130 (stopped by SIGTERM); did it finish before the signal?"
scontrol requeue "${JOB}_$VICTIM" || fail "scontrol requeue ${JOB}_$VICTIM failed"
# A requeued job is held back for a while before it may start again: let it start now.
scontrol update JobId="${JOB}_$VICTIM" EligibleTime=now >/dev/null 2>&1 ||
    scontrol update JobId="${JOB}_$VICTIM" StartTime=now >/dev/null 2>&1 || true
log "requeued task ${JOB}_$VICTIM: $(task_state "$VICTIM")"

deadline=$((SECONDS + TIMEOUT))
while [ -n "$(squeue -h -j "$JOB" 2>/dev/null)" ]; do
    [ $SECONDS -lt $deadline ] || fail "the array job did not finish within $TIMEOUT s"
    sleep 0.5
done
for k in $(seq $TASKS); do
    st=$(task_state "$k")
    log "task ${JOB}_$k: $st, $(games_in "$k") games"
    [ "$st" = "COMPLETED 0:0" ] || {
        cat "$WORK/logs/kalaha-shard-$k.log" >&2 || true
        fail "task ${JOB}_$k ended $st"
    }
done
log "log of the preempted task ${JOB}_$VICTIM:"
sed 's/^/test-slurm:   | /' "$WORK/logs/kalaha-shard-$VICTIM.log"
grep -q -- "--resume" "$WORK/logs/kalaha-shard-$VICTIM.log" ||
    fail "the preempted task's log does not show how to resume"
grep -q "resuming" "$WORK/logs/kalaha-shard-$VICTIM.log" ||
    fail "the requeued task did not resume its shard"

# --- Compare with one machine ------------------------------------------------------------
"$KALAHA" tournament --config "$CONFIG" --out "$WORK/single" --quiet ||
    fail "the single-machine tournament failed"
"$KALAHA" ratings "$WORK/single" --out "$WORK/one" >/dev/null
merged_out=$("$KALAHA" ratings "$RESULTS"/shard-*/ --out "$WORK/merged")
log "kalaha ratings of the 4 shards: $(echo "$merged_out" | grep -o '[0-9]* games counted.*' | head -n 1)"

# engine, games, wins, draws, losses of standings.csv, by engine name.
wdl() { cut -d, -f2-6 "$1/standings.csv" | tail -n +2 | sort; }
log "engine,games,wins,draws,losses: single machine | merged shards"
paste -d'|' <(wdl "$WORK/one") <(wdl "$WORK/merged") | sed 's/^/test-slurm:   /'
[ "$(wdl "$WORK/one" | wc -l)" -eq 5 ] || fail "expected 5 engines in the standings"
if ! diff <(wdl "$WORK/one") <(wdl "$WORK/merged") >/dev/null; then
    fail "wins, draws and losses of the merged shards differ from the single run"
fi
for f in standings.csv h2h.csv; do
    diff "$WORK/one/$f" "$WORK/merged/$f" >&2 || fail "$f of the merged shards differs from the single run"
done
log "PASS: the 4 Slurm shards, one of them preempted and resumed, equal the single run"
