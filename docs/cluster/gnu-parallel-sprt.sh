#!/usr/bin/env bash
# One SPRT played by N workers with GNU parallel: on this machine, or on several with
# `--sshloginfile hosts` (SHARED must then be a shared folder, and kalaha and the engines
# installed at the same paths everywhere). Then the verdict, recomputed from every worker's
# games; its exit code is the test's (0 H1 accepted, 3 H0 accepted, 4 no decision).
set -euo pipefail
N=${N:-4}
SHARED=${SHARED:-results/sprt-shared}
CONFIG=${CONFIG:-engines.toml}   # the engines, time control, id and seed
SPRT=${SPRT:---elo0 0 --elo1 5 --max-games 20000}

# Each worker exits with the verdict's code (or 130 when stopped: run this again to
# continue); the report below says the verdict.
parallel --jobs "${JOBS:-$N}" --line-buffer --tag \
    kalaha sprt --config "$CONFIG" $SPRT --workers "$N" --worker {} --shared "$SHARED" \
    --concurrency 1 --quiet ::: $(seq 1 "$N") || true

exec kalaha sprt --report "$SHARED"
