#!/usr/bin/env bash
# One SPRT played by a Slurm array job: task K is worker K of N, and the workers meet in
# the shared folder $SHARED (README.md, "One SPRT on many machines").
#
#   sbatch --array=1-8 docs/cluster/slurm-sprt.sh
#   kalaha sprt --report "$SHARED"   # at any time: where the test stands; at the end: the
#                                    # verdict, recomputed from every worker's games
#
# Every task exits with the test's exit code: 0 H1 accepted, 3 H0 accepted, 4 no decision;
# 130 when it was preempted (SIGTERM): requeued, it continues its own pairs.
#
#SBATCH --job-name=kalaha-sprt
#SBATCH --array=1-8
#SBATCH --cpus-per-task=2
#SBATCH --time=4:00:00
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=kalaha-sprt-%a.log
set -euo pipefail

SHARED=${SHARED:-$HOME/kalaha-sprt}          # seen by every node: one folder per test
# The engines, time control, id and seed; outside $SHARED, which is hidden from the engines
# (a worker whose engine runs there is refused).
CONFIG=${CONFIG:-$HOME/kalaha-sprt.toml}
SPRT=${SPRT:---elo0 0 --elo1 5 --max-games 20000}
KALAHA=${KALAHA:-kalaha}

K=${SLURM_ARRAY_TASK_ID:?run this with sbatch --array=1-N}
N=${SLURM_ARRAY_TASK_COUNT:?run this with sbatch --array=1-N}

if [ -d "$SHARED/worker-$K" ]; then
    echo "slurm-sprt: worker $K of $N: continuing $SHARED/worker-$K" >&2
else
    echo "slurm-sprt: worker $K of $N: playing pairs $K, $((K + N)), ... into $SHARED/worker-$K" >&2
fi
# The same command starts and continues a worker.
# shellcheck disable=SC2086 # $SPRT holds several flags
exec "$KALAHA" sprt --config "$CONFIG" $SPRT --workers "$N" --worker "$K" --shared "$SHARED" \
    --concurrency "${SLURM_CPUS_PER_TASK:-1}" --quiet
