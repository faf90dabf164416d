#!/usr/bin/env bash
# One tournament in N shards with GNU parallel: locally, or on several machines with
# `--sshloginfile hosts` (RESULTS must then be a shared folder, and kalaha and the engines
# installed at the same paths everywhere).
set -euo pipefail
N=${N:-8}
RESULTS=${RESULTS:-results/nightly}
CONFIG=${CONFIG:-tournament.toml}   # holds id and seed: the same for every shard

parallel --jobs "${JOBS:-$N}" --line-buffer --tag \
    'if [ -f {2}/shard-{1}/tournament.toml ]; then kalaha tournament --resume {2}/shard-{1} --concurrency 1 --quiet; else kalaha tournament --config {3} --shard {1}/{4} --out {2}/shard-{1} --concurrency 1 --quiet; fi' \
    ::: $(seq 1 "$N") ::: "$RESULTS" ::: "$CONFIG" ::: "$N"

kalaha ratings "$RESULTS"/shard-*/ --out "$RESULTS/merged"
