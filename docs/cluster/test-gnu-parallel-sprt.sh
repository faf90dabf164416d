#!/usr/bin/env bash
# Runs gnu-parallel-sprt.sh on this machine, and the pod script of kubernetes-sprt-job.yaml
# as local processes, and checks each verdict against one machine's and against
# `kalaha sprt --report`.
#
#   bash docs/cluster/test-gnu-parallel-sprt.sh   # KALAHA=/path/to/kalaha for another binary
#
# - Installs Debian's parallel when it is missing (needs root and apt).
# - Runs the recipe with N=3 workers of an SPRT of deterministic built-in engines (hard at
#   depth 3 against greedy, with far more time than they need), then runs it again: every
#   worker finds the verdict and plays nothing.
# - Runs the script of the Kubernetes Indexed Job's pods with JOB_COMPLETION_INDEX 0, 1
#   and 2 (its /config and /results in a temporary folder): every pod ends with status 0.
# - Plays the same test on this machine alone, one game at a time, and compares the
#   verdict, pairs and LLR of each with it: the workers decide over the pairs in order.
#
# Exit status: 0 when they are equal; 1 on any difference or failure. When GNU parallel
# cannot be installed it prints a line starting with "SKIP:" and exits 0.
set -euo pipefail

source "$(dirname "$0")/test-common.sh"

use_parallel

CONFIG="$WORK/engines.toml"
cat >"$CONFIG" <<'TOML'
id = "parallel_sprt_check"
seed = 5
tc = "5s"

[[engine]]
builtin = "hard"
options = { depth = 3 }

[[engine]]
builtin = "greedy"
TOML
SPRT="--elo0 0 --elo1 50 --max-games 400"

# The verdict line of sprt-result.toml in $1, and a field of it.
field() { sed -n "s/^$2 = //p" "$1/sprt-result.toml"; }

"$KALAHA" sprt --config "$CONFIG" $SPRT -j 1 --quiet --out "$WORK/one" >/dev/null || {
    code=$?
    [ "$code" = 3 ] || [ "$code" = 4 ] || fail "the single-machine SPRT failed ($code)"
}
log "one machine, one game at a time: $(field "$WORK/one" verdict)"

# check DIR CODE: the verdict in DIR is the single machine's, and --report recomputes it.
check() {
    for key in verdict exit_code pairs games llr; do
        [ "$(field "$1" "$key")" = "$(field "$WORK/one" "$key")" ] ||
            fail "$key in $1/sprt-result.toml is $(field "$1" "$key"), one machine's $(field "$WORK/one" "$key")"
    done
    [ "$2" = "$(field "$1" exit_code)" ] || fail "exit code $2, the verdict's is $(field "$1" exit_code)"
}

export N=3 JOBS=3 SHARED="$WORK/results/sprt" CONFIG SPRT
log "running gnu-parallel-sprt.sh with N=$N workers"
set +e
bash "$HERE/gnu-parallel-sprt.sh" >"$WORK/run1.log" 2>&1
code=$?
set -e
sed 's/^/test-gnu-parallel-sprt:   | /' "$WORK/run1.log"
grep -q "sprt-result.toml: the same verdict" "$WORK/run1.log" || fail "kalaha sprt --report disagrees"
check "$SHARED" "$code"
[ "$(grep -cF "$(field "$SHARED" verdict | tr -d '"')" "$WORK/run1.log")" -ge 4 ] ||
    fail "not every worker printed the verdict"
log "running gnu-parallel-sprt.sh again: every worker finds the verdict"
games() { cat "$SHARED"/worker-*/games.jsonl | wc -l; }
before=$(games)
set +e
bash "$HERE/gnu-parallel-sprt.sh" >"$WORK/run2.log" 2>&1
code2=$?
set -e
[ "$code2" = "$code" ] || fail "the second run exited $code2, the first $code"
[ "$(games)" = "$before" ] || {
    cat "$WORK/run2.log" >&2
    fail "a worker played again after the verdict"
}

# --- The pods of kubernetes-sprt-job.yaml, as local processes -----------------------------
mkdir -p "$WORK/k8s/config" "$WORK/k8s/results"
cp "$CONFIG" "$WORK/k8s/config/engines.toml"
awk '/^            - \|$/ { on = 1; next } /^          volumeMounts:/ { on = 0 } on { sub(/^              /, ""); print }' \
    "$HERE/kubernetes-sprt-job.yaml" |
    sed -e "s#/config/#$WORK/k8s/config/#g" -e "s#/results/#$WORK/k8s/results/#g" >"$WORK/pod.sh"
grep -q "JOB_COMPLETION_INDEX" "$WORK/pod.sh" || fail "the pod script was not found in kubernetes-sprt-job.yaml"
pids=()
for i in 0 1 2; do
    JOB_COMPLETION_INDEX=$i WORKERS=3 SPRT="$SPRT" sh "$WORK/pod.sh" >"$WORK/pod-$i.log" 2>&1 &
    pids+=($!)
done
for i in 0 1 2; do
    wait "${pids[$i]}" || {
        cat "$WORK/pod-$i.log" >&2
        fail "pod $i ended with status $? (a pod ends with 0 whatever the verdict)"
    }
    log "pod $i: $(tail -n 1 "$WORK/pod-$i.log")"
done
check "$WORK/k8s/results/sprt" "$(field "$WORK/one" exit_code)"
"$KALAHA" sprt --report "$WORK/k8s/results/sprt" | grep -q "sprt-result.toml: the same verdict" ||
    fail "kalaha sprt --report disagrees with the pods' verdict"
log "PASS: $N workers under GNU parallel, and as the pods of the Kubernetes Job, reach one machine's verdict"
