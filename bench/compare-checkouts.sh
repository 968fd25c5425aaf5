#!/usr/bin/env bash
# Before/after: B1, B2, B3 (GET of a definition), B4 and B7 run from another checkout (the baseline) and from this one, alternating, each
# against its own anchor measured in the same invocation, so the ratios of the two builds can be compared.
#
#   bash bench/compare-checkouts.sh BASELINE_DIR [REPS] > results.txt
#
# BASELINE_DIR: a checkout of an older commit with node_modules (a symlink to this one's is fine) and its dist/
# built (`node scripts/build.mjs` there). Both run on this checkout's Node (node_modules/.bin first on PATH).
# Sizes are small enough for a shared machine (about 8 minutes a repetition); the order of the two builds flips
# every repetition. Prints each benchmark's SUMMARY and ratio lines under a header naming build, time and load.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
base=$(cd "${1:?usage: compare-checkouts.sh BASELINE_DIR [REPS]}" && pwd -P)
reps=${2:-2}
export PATH=$here/node_modules/.bin:$PATH

run() { # checkout, name, benchmark file, its arguments
  local dir=$1 name=$2
  shift 2
  echo "### $name $([[ $dir == "$base" ]] && echo baseline || echo this) $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  (cd "$dir" && timeout 900 node --import tsx "$@" 2>&1 | grep -E '^SUMMARY|ratio|jobs/s|per job|req/s' | tail -6) || true
}

for ((rep = 1; rep <= reps; rep++)); do
  order=("$base" "$here")
  ((rep % 2 == 0)) && order=("$here" "$base")
  for dir in "${order[@]}"; do
    run "$dir" B1 bench/b1-throughput.ts --jobs 10000 --reps 1 --max-background 100
    run "$dir" B2 bench/b2-spawn.ts --jobs 1500 --reps 1 --max-load 9 --quiet-timeout 1
    run "$dir" B3 bench/get-object.ts --duration 5 --reps 1 --warmup 2
    run "$dir" B4 bench/b4-latency.ts --duration 10 --reps 1 --max-load 9 --quiet-timeout 1
    run "$dir" B7 bench/b7-chain.ts --steps 100 --reps 1 --max-load 9 --quiet-timeout 1
  done
done
