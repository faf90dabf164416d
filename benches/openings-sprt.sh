#!/bin/sh
# How many game pairs an SPRT needs, and how many of its games repeat an earlier one move
# for move, with each kind of openings: `medium` at depth 4 (new) against `medium` at depth
# 3 (base), both deterministic, with the default test (normalized Elo 0 against 5).
#
#   benches/openings-sprt.sh KALAHA RUNS [OLD_KALAHA]
#
# KALAHA is the kalaha binary measured; OLD_KALAHA, when given, is a kalaha that still drew
# each opening at random with replacement (its `--opening-plies 4` is measured as "drawn").
# Each run uses its own --seed (1..RUNS). One line per run, then per kind the mean pairs,
# their standard deviation, the range and the share of repeated games. Needs python3.
set -eu
KALAHA=$1
RUNS=$2
OLD=${3:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
run() { # kind binary seed extra-flags...
    kind=$1; bin=$2; seed=$3; shift 3
    out="$WORK/$kind-$seed"
    "$bin" sprt --engine "builtin=medium option.depth=4 name=d4" \
        --engine "builtin=medium option.depth=3 name=d3" \
        --move-time 50ms -j 2 --seed "$seed" --out "$out" --quiet "$@" >/dev/null 2>&1 || true
    python3 - "$kind" "$seed" "$out" <<'PY'
import json, sys
kind, seed, out = sys.argv[1:]
seen, repeats, games = set(), 0, 0
for line in open(out + "/games.jsonl"):
    g = json.loads(line)
    key = (g["south"], g["north"], g.get("start", ""), tuple(m["pit"] for m in g["moves"]))
    games += 1
    if key in seen:
        repeats += 1
    seen.add(key)
result = dict(l.split(" = ", 1) for l in open(out + "/sprt-result.toml").read().splitlines() if " = " in l)
print(kind, seed, result["pairs"], games, repeats, result["verdict"].split(":")[0].strip('"'))
PY
}
{
    for seed in $(seq 1 "$RUNS"); do
        [ -n "$OLD" ] && run drawn "$OLD" "$seed" --opening-plies 4
        run distinct-4-plies "$KALAHA" "$seed" --opening-plies 4
        run book "$KALAHA" "$seed"
    done
} | tee "$WORK/runs.txt"
python3 - "$WORK/runs.txt" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
for kind in dict.fromkeys(r[0] for r in rows):
    pairs = [int(r[2]) for r in rows if r[0] == kind]
    games = sum(int(r[3]) for r in rows if r[0] == kind)
    repeats = sum(int(r[4]) for r in rows if r[0] == kind)
    h1 = sum(1 for r in rows if r[0] == kind and r[5] == "H1")
    sd = statistics.stdev(pairs) if len(pairs) > 1 else 0.0
    print(f"{kind}: {len(pairs)} runs, mean {statistics.mean(pairs):.0f} pairs (sd {sd:.0f}, "
          f"{min(pairs)}..{max(pairs)}), H1 in {h1}, repeated games {repeats} of {games} "
          f"({100 * repeats / games:.1f}%)")
PY
