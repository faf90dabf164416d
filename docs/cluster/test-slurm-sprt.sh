#!/usr/bin/env bash
# Runs slurm-sprt.sh on a real single-node Slurm started on this machine, preempts one
# worker and requeues it, and checks the verdict the workers wrote against the one
# `kalaha sprt --report` recomputes from their games.
#
#   bash docs/cluster/test-slurm-sprt.sh   # KALAHA=/path/to/kalaha to test another binary
#
# - Starts a one-node Slurm (slurm-local.sh; slurmctld on port $SLURM_PORT, 16827 by
#   default, slurmd on the next), installing it when it is missing.
# - Submits slurm-sprt.sh as an array job of 4 workers (`sbatch --array=1-4`) of an SPRT of
#   hard (50 ms a move) against first, which decides in some twenty game pairs.
# - Holds worker 1 back (the test cannot decide without pair 1: the others play a few
#   pairs ahead and wait), preempts the first other worker seen running with a game
#   recorded (`scancel --signal=TERM`: it stops cleanly, exit 130), requeues it (the recipe
#   continues its pairs), then lets worker 1 go.
# - Checks that the preempted worker lost no recorded game, that every task exited with
#   the verdict's exit code, and that `kalaha sprt --report` recomputes the same verdict.
#
# Exit status: 0 when all holds; 1 on any difference or failure. When Slurm cannot be
# installed or started here it prints a line starting with "SKIP:" and exits 0.
set -euo pipefail

source "$(dirname "$0")/test-common.sh"
TASKS=4
SLURM_PORT=${SLURM_PORT:-16827}
TIMEOUT=${TIMEOUT:-300} # seconds for the array job

source "$HERE/slurm-local.sh"

# --- The test ----------------------------------------------------------------------------
SHARED="$WORK/results/sprt"
CONFIG="$WORK/engines.toml"
cat >"$CONFIG" <<'EOF2'
id = "slurm_sprt_check"
seed = 3
tc = "50ms"
time_margin = "200ms"

[[engine]]
builtin = "hard"

[[engine]]
builtin = "first"
EOF2
SPRT="--elo0 0 --elo1 50 --max-games 400"

jsonl_lines() {
    local f="$SHARED/worker-$1/games.jsonl"
    if [ -f "$f" ]; then wc -l <"$f"; else echo 0; fi
}

# Submitted held; worker 1 is let go last, so that the test cannot decide (it needs pair 1)
# before a worker has been preempted and requeued.
JOB=$(sbatch --parsable --hold --array=1-$TASKS --cpus-per-task=1 --time=10:00 \
    --chdir="$WORK" --output="$WORK/logs/kalaha-sprt-%a.log" --open-mode=append \
    --export=ALL,SHARED="$SHARED",CONFIG="$CONFIG",KALAHA="$KALAHA",SPRT="$SPRT" \
    "$HERE/slurm-sprt.sh") || fail "sbatch refused the array job"
JOB=${JOB%%;*}
log "submitted array job $JOB: sbatch --array=1-$TASKS docs/cluster/slurm-sprt.sh ($SPRT)"
for k in $(seq 2 $TASKS); do
    scontrol release "${JOB}_$k" || fail "scontrol release ${JOB}_$k failed"
done

VICTIM=""
deadline=$((SECONDS + 120))
while [ -z "$VICTIM" ]; do
    [ $SECONDS -lt $deadline ] || fail "no worker was seen running with a game recorded"
    for k in $(seq 2 $TASKS); do
        if [ "$(task_state "$k" | cut -d' ' -f1)" = RUNNING ] && [ "$(jsonl_lines "$k")" -ge 1 ]; then
            VICTIM=$k
            break
        fi
    done
    sleep 0.1
done
scancel --signal=TERM --full "${JOB}_$VICTIM" || fail "scancel --signal=TERM ${JOB}_$VICTIM failed"
log "preempted worker ${JOB}_$VICTIM with scancel --signal=TERM after $(jsonl_lines "$VICTIM") game(s)"
deadline=$((SECONDS + 60))
while [ "$(task_state "$VICTIM" | cut -d' ' -f1)" = RUNNING ]; do
    [ $SECONDS -lt $deadline ] || fail "worker ${JOB}_$VICTIM still runs 60 s after SIGTERM"
    sleep 0.2
done
stopped=$(task_state "$VICTIM")
cp "$SHARED/worker-$VICTIM/games.jsonl" "$WORK/victim-before.jsonl"
log "worker ${JOB}_$VICTIM stopped: $stopped with $(jsonl_lines "$VICTIM") game(s) recorded"
[ "${stopped#* }" = "130:0" ] ||
    fail "worker ${JOB}_$VICTIM ended with $stopped, not with exit code 130 (stopped by SIGTERM)"
scontrol requeue "${JOB}_$VICTIM" || fail "scontrol requeue ${JOB}_$VICTIM failed"
scontrol update JobId="${JOB}_$VICTIM" EligibleTime=now >/dev/null 2>&1 ||
    scontrol update JobId="${JOB}_$VICTIM" StartTime=now >/dev/null 2>&1 || true
log "requeued worker ${JOB}_$VICTIM: $(task_state "$VICTIM")"
scontrol release "${JOB}_1" || fail "scontrol release ${JOB}_1 failed"
log "let worker ${JOB}_1 go"

deadline=$((SECONDS + TIMEOUT))
while [ -n "$(squeue -h -j "$JOB" 2>/dev/null)" ]; do
    [ $SECONDS -lt $deadline ] || fail "the array job did not finish within $TIMEOUT s"
    sleep 0.5
done
[ -f "$SHARED/sprt-result.toml" ] || fail "no verdict in $SHARED/sprt-result.toml"
verdict=$(sed -n 's/^verdict = "\(.*\)"$/\1/p' "$SHARED/sprt-result.toml")
code=$(sed -n 's/^exit_code = //p' "$SHARED/sprt-result.toml")
log "verdict (exit code $code): $verdict"
for k in $(seq $TASKS); do
    st=$(task_state "$k")
    log "worker ${JOB}_$k: $st, $(jsonl_lines "$k") games"
    [ "${st#* }" = "$code:0" ] || {
        cat "$WORK/logs/kalaha-sprt-$k.log" >&2 || true
        fail "worker ${JOB}_$k ended $st, not with the verdict's exit code $code"
    }
    grep -qF "$verdict" "$WORK/logs/kalaha-sprt-$k.log" || fail "worker $k did not print the verdict"
done
log "log of the preempted worker ${JOB}_$VICTIM:"
sed 's/^/test-slurm-sprt:   | /' "$WORK/logs/kalaha-sprt-$VICTIM.log"
grep -q "continuing" "$WORK/logs/kalaha-sprt-$VICTIM.log" ||
    fail "the requeued worker did not continue its pairs"
# Whole lines only (wc -l counts the lines with their newline): a line cut by the stop is
# not a recorded game.
recorded=$(wc -l <"$WORK/victim-before.jsonl")
cmp -s <(head -n "$recorded" "$WORK/victim-before.jsonl") <(head -n "$recorded" "$SHARED/worker-$VICTIM/games.jsonl") ||
    fail "a game the preempted worker had recorded is gone"
log "the preempted worker kept its $recorded recorded games and has $(jsonl_lines "$VICTIM") now"

set +e
"$KALAHA" sprt --report "$SHARED" >"$WORK/report.txt"
report_code=$?
set -e
sed 's/^/test-slurm-sprt:   report: /' "$WORK/report.txt"
[ "$report_code" = "$code" ] || fail "kalaha sprt --report exited $report_code, the verdict's code is $code"
grep -qxF "$verdict" "$WORK/report.txt" || fail "kalaha sprt --report recomputes another verdict"
grep -q "sprt-result.toml: the same verdict" "$WORK/report.txt" || fail "kalaha sprt --report disagrees"
log "PASS: the 4 Slurm workers, one preempted and requeued, wrote the verdict kalaha sprt --report recomputes"
