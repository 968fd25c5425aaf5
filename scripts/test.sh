#!/usr/bin/env bash
# `npm test`: type check, lint, format check, build dist/ when stale, start a throwaway PostgreSQL cluster, run the node:test suite
# (on the Node in node_modules/.bin when npm installed one).
#
#   bash scripts/test.sh [FILE...]     with FILE arguments only those test files run,
#                                      otherwise every test/**/*.test.ts.
#
# Environment:
#   MILLRACE_SKIP_CHECKS=1   skip the type checks (`tsc --noEmit` of src/ and of the console), `biome lint`, the `biome format`
#                            check and the import rules (dependency-cruiser: no circles, the layers of docs/architecture.md §2) (escape hatch while src/ is mid-edit;
#                            never set it in CI - .ci/run unsets it).
#   MILLRACE_REQUIRE_PG=1    fail instead of skipping the PostgreSQL suite when initdb/pg_ctl are missing.
#   PG_BINDIR                where to find initdb/pg_ctl (see scripts/pg-cluster.sh).
#   MILLRACE_TEST_TIMES=F    also write each test file's time to F, slowest first (scripts/test-file-times.mjs).
# The tests run with TMPDIR set to a folder of the run's own, removed at the end; a warning names what they left.
# Exported to the tests: MILLRACE_TEST_PG_URL (unset when the PostgreSQL suite is skipped) and
# MILLRACE_LOCAL_AGENT_NICE=0 (below).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd -P)

# The Node that `npm install` put in node_modules/.bin (Node 24 LTS where the platform has it; better-sqlite3 loads
# in it, see scripts/check-sqlite.mjs) runs the checks, the build, the tests and everything they spawn
# (process.execPath, `node` on PATH), as under `npm test`, also when this script is run directly. Where npm
# installed none, the machine's Node does.
export PATH=$root/node_modules/.bin:$PATH
echo "== node $(node --version) ($(command -v node))"

# The servers the tests start run their local agent at nice 0, not the default 10 (local-agent-nice): the suite's
# processes are one session, hence one scheduling group, where a niced agent would wait behind every busy test
# process. test/integration/agent/priority.test.ts runs the default.
export MILLRACE_LOCAL_AGENT_NICE=${MILLRACE_LOCAL_AGENT_NICE:-0}

# Run a tool from node_modules/.bin (not `npx`, which could fetch an unrelated package when it is missing).
run_bin() {
  local exe=$root/node_modules/.bin/$1
  shift
  if [[ ! -x $exe ]]; then
    echo "test.sh: $exe not found - run npm install first" >&2
    exit 1
  fi
  "$exe" "$@"
}

if [[ ${MILLRACE_SKIP_CHECKS:-} == 1 ]]; then
  echo "test.sh: MILLRACE_SKIP_CHECKS=1 - skipping tsc, biome and the import rules" >&2
else
  echo "== tsc --noEmit"
  run_bin tsc --noEmit
  # The console's browser modules (src/ui/static/app, JSDoc types), with the DOM's types instead of Node's.
  echo "== tsc --noEmit -p tsconfig.console.json"
  run_bin tsc --noEmit -p tsconfig.console.json
  echo "== biome lint"
  run_bin biome lint .
  echo "== biome format (check)"
  run_bin biome format .
  echo "== import rules (dependency-cruiser: no circles, the layers of docs/architecture.md §2)"
  run_bin depcruise src --config .dependency-cruiser.cjs --output-type err
fi

# The compiled program (dist/): `millrace` runs it, CLI tests and the agents of test servers with it.
echo "== build (dist/, when older than src/)"
node scripts/build.mjs --if-stale

pg_dir=
out=
run_tmp=
# Stop the node test runner (if still running) and its test-file processes.
stop_node() {
  local pid kids
  pid=$(cat "$out.pid" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 0
  kids=$(pgrep -P "$pid" 2>/dev/null || true)
  # shellcheck disable=SC2086
  kill -TERM "$pid" $kids 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL "$pid" $kids 2>/dev/null || true
}
cleanup() {
  local rc=$?
  if [[ -n $out ]]; then
    stop_node
    rm -f -- "$out" "$out.pid" "$out.rc"
  fi
  if [[ -n $pg_dir ]]; then bash "$root/scripts/pg-cluster.sh" stop "$pg_dir" || true; fi
  if [[ -n $run_tmp ]]; then rm -rf -- "$run_tmp" || true; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Test files.
if (($# > 0)); then
  files=("$@")
else
  shopt -s globstar nullglob
  files=(test/**/*.test.ts)
  shopt -u globstar nullglob
fi
if ((${#files[@]} == 0)); then
  echo "test.sh: no test files" >&2
  exit 1
fi

# PostgreSQL cluster.
unset MILLRACE_TEST_PG_URL
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/millrace-pg.XXXXXX")
chmod 755 "$pg_dir"
if [[ $(id -u) -eq 0 ]] && id postgres >/dev/null 2>&1; then chown postgres: "$pg_dir"; fi
echo "== starting PostgreSQL in $pg_dir"
pg_start=$SECONDS
set +e
pg_url=$(bash "$root/scripts/pg-cluster.sh" start "$pg_dir")
pg_rc=$?
set -e
if ((pg_rc == 0)); then
  export MILLRACE_TEST_PG_URL=$pg_url
  echo "PostgreSQL at $pg_url (started in $((SECONDS - pg_start))s)"
elif ((pg_rc == 3)); then
  if [[ ${MILLRACE_REQUIRE_PG:-} == 1 ]]; then
    echo "test.sh: MILLRACE_REQUIRE_PG=1 but initdb/pg_ctl not found" >&2
    exit 1
  fi
  echo "PostgreSQL suite skipped: initdb/pg_ctl not found"
else
  echo "test.sh: could not start PostgreSQL (exit $pg_rc)" >&2
  exit 1
fi

# Tests. The spec reporter ends with the summary (ℹ tests N / ℹ pass N / ℹ fail N ...),
# which is parsed below to refuse a run in which no test ran.
out=$(mktemp "${TMPDIR:-/tmp}/millrace-test-out.XXXXXX")
echo "== node --test (${#files[@]} files)"
node_pid_file=$out.pid
node_rc_file=$out.rc
# The per-file timeout only catches hangs: a loaded 2-core machine makes CLI and agent files take minutes (each CLI
# call still loads most of the program), and slower must never mean red.
# node runs in the background and the shell waits for it, so that a signal to this script runs the
# cleanup trap at once (a foreground child would delay it until node exits); the trap stops node.
# Three files at a time on two cores: a file spends much of its time waiting for servers, agents and jobs, so with
# two at a time the cores were idle a fifth of the run (a quiet 2-core machine: whole script 7 min, tests 6.7 min).
reporters=(--test-reporter=spec --test-reporter-destination=stdout)
if [[ -n ${MILLRACE_TEST_TIMES:-} ]]; then
  reporters+=(--test-reporter=./scripts/test-file-times.mjs "--test-reporter-destination=$MILLRACE_TEST_TIMES")
fi
# The tests' temporary files go to a folder of this run's own, removed at the end (nothing is left in the machine's
# temp dir); what a test failed to remove is named below. tsx's and Node's compile caches stay the shared ones.
sys_tmp=${TMPDIR:-/tmp}
run_tmp=$(mktemp -d "$sys_tmp/millrace-run.XXXXXX")
chmod 755 "$run_tmp" # the tests' own PostgreSQL clusters in it run as user postgres when this runs as root
caches=("tsx-$(id -u)" node-compile-cache)
for cache in "${caches[@]}"; do
  mkdir -p "$sys_tmp/$cache" && ln -s "$sys_tmp/$cache" "$run_tmp/$cache"
done
{
  TMPDIR=$run_tmp node --import tsx --test "${reporters[@]}" --test-concurrency=3 --test-timeout=600000 "${files[@]}" &
  echo $! >"$node_pid_file"
  rc=0
  wait $! || rc=$?
  echo "$rc" >"$node_rc_file"
} 2>&1 | tee "$out" &
wait $! || true
node_rc=$(cat "$node_rc_file" 2>/dev/null || echo 1)
left=$(find "$run_tmp" -mindepth 1 -maxdepth 1 ! -name "${caches[0]}" ! -name "${caches[1]}" -printf '%f\n' | sort | tr '\n' ' ')
if [[ -n $left ]]; then echo "test.sh: warning: the tests left in the temp dir (removed now): $left" >&2; fi

summary() { sed -e 's/\x1b\[[0-9;]*m//g' "$out" | grep -E "^ℹ $1 [0-9]+\$" | tail -n 1 | awk '{print $3}'; }
num() {
  local v
  v=$(summary "$1")
  echo "${v:-0}"
}
tests=$(summary tests)
if [[ -z $tests ]]; then
  echo "test.sh: no test summary in the output (node exit $node_rc)" >&2
  ((node_rc != 0)) && exit "$node_rc"
  exit 1
fi
# Every failed or cancelled test (a timeout, or a test cut short when its file or suite failed) with where it
# is and the first line of why, from the reporter's closing "failing tests:" section.
failures() {
  sed -e 's/\x1b\[[0-9;]*m//g' "$out" | awk '
    /^✖ failing tests:$/ { on = 1; next }
    !on { next }
    /^test at / { where = substr($0, 9); next }
    /^✖ / { name = $0; sub(/^✖ /, "", name); sub(/ \([0-9.]+m?s\)$/, "", name); want = 1; next }
    want && NF { why = $0; sub(/^ +/, "", why); gsub(/^\x27|\x27$/, "", why); print "  " where "  " name "  - " why; want = 0 }'
}
if ((node_rc != 0)); then
  echo "test.sh: tests failed (node exit $node_rc; tests $tests, fail $(num fail), cancelled $(num cancelled)):" >&2
  failures >&2
  exit "$node_rc"
fi
# Node 20 reports a file that defines no test as one passing "test" named after its path: don't count those.
empty_files=$(sed -e 's/\x1b\[[0-9;]*m//g' "$out" | grep -cE '^✔ /.*\.test\.ts \([0-9.]+m?s\)$' || true)
if ((empty_files > 0)); then echo "test.sh: warning: $empty_files test file(s) define no tests" >&2; fi
ran=$((tests - empty_files - $(num skipped) - $(num todo)))
if ((tests == 0 || ran <= 0)); then
  echo "test.sh: no test ran (tests $tests, skipped $(num skipped), todo $(num todo), files without tests $empty_files)" >&2
  exit 1
fi
echo "test.sh: ok - tests $tests, pass $(num pass), skipped $(num skipped)"
