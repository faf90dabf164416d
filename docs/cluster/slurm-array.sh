#!/usr/bin/env bash
# One tournament as a Slurm array job: task K plays shard K of N.
#
#   sbatch --array=1-16 docs/cluster/slurm-array.sh
#   # when the array has finished:
#   kalaha ratings "$RESULTS"/shard-*/ --out "$RESULTS"/merged
#
#SBATCH --job-name=kalaha-shard
#SBATCH --array=1-16
#SBATCH --cpus-per-task=4
#SBATCH --time=12:00:00
#SBATCH --output=kalaha-shard-%a.log
set -euo pipefail

RESULTS=${RESULTS:-$HOME/kalaha-results}   # shared by every node
CONFIG=${CONFIG:-$RESULTS/tournament.toml} # holds id and seed: the same for every shard
KALAHA=${KALAHA:-kalaha}

K=${SLURM_ARRAY_TASK_ID:?run this with sbatch --array}
N=${SLURM_ARRAY_TASK_COUNT:?run this with sbatch --array}
OUT="$RESULTS/shard-$K"

if [ -f "$OUT/tournament.toml" ]; then
    # A re-queued or restarted task continues where it stopped.
    echo "slurm-array: task $K of $N: resuming $OUT" >&2
    exec "$KALAHA" tournament --resume "$OUT" --concurrency "${SLURM_CPUS_PER_TASK:-1}" --quiet
fi
echo "slurm-array: task $K of $N: playing shard $K/$N into $OUT" >&2
exec "$KALAHA" tournament --config "$CONFIG" --shard "$K/$N" --out "$OUT" \
    --concurrency "${SLURM_CPUS_PER_TASK:-1}" --quiet
