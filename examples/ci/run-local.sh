#!/usr/bin/env bash
# run-local.sh [--fail]: the steps of lcwrap-tests.yml on this machine,
# with fake-tests.sh standing in for `go test ./...`:
#
#   1. build lcwrap with `make build` (only when none is on PATH),
#   2. run the tests under `lcwrap --emit stderr`, 2>&1 | tee ci.log,
#   3. write the HTML report, keep it, the log and the journal as the job's
#      artifacts,
#   4. check the log: `lcwrap validate --mixed --require-events`, and an
#      ended lifecycle.
#
# --fail makes one fake test fail. Exit status: the test step's (lcwrap's,
# which is the test command's) when the log checks out; 2 when it does not.
# Works in a temp directory, removed at the end (KEEP=1 keeps it).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { printf 'run-local: %s\n' "$*"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/lcwrap-ci-example.XXXXXX")"
cleanup() { if [ "${KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
cd "$work"

# The job's environment: its own journal, and no lineage from an lcwrap
# that may be running this script.
unset LCWRAP_CHILD_ID LCWRAP_ROOT_CHILD_ID
export LCWRAP_JOURNAL="$work/lcwrap/journal.jsonl"

# 1. Build lcwrap.
if ! command -v lcwrap >/dev/null 2>&1; then
	say "building lcwrap from $root"
	make -s -C "$root" build BIN="$work/bin/lcwrap"
	PATH="$work/bin:$PATH"
fi
say "using $(command -v lcwrap) ($(lcwrap --version))"

# 2. Test. The heartbeat is 100ms here so that this short run shows some;
#    the workflow keeps the default (10s).
say "step Test: lcwrap --emit stderr -- fake-tests.sh${1:+ $1} 2>&1 | tee ci.log"
set +e
FAKE_TESTS_LOG="$work/ci.log" \
	lcwrap --emit stderr --heartbeat 100ms --child-id ci-local-test -- "$here/fake-tests.sh" "$@" 2>&1 | tee ci.log
rc=$?
set -e
say "the test step exited $rc (lcwrap's exit code, which is the test command's)"

# 3. Report, and upload: here, copy the artifacts aside.
say "step Report: lcwrap report --html report.html"
lcwrap report --html report.html
mkdir -p artifacts
cp ci.log report.html "$LCWRAP_JOURNAL" artifacts/
say "artifacts: $(cd artifacts && echo *)"

# 4. Check the lifecycle lines.
say "step Check: lcwrap validate --mixed --require-events ci.log"
ok=1
lcwrap validate --mixed --require-events ci.log || ok=0
if ! lcwrap status --file ci.log --mixed --all --json | jq -e '[.children[] | select(.endedAt)] | length > 0' >/dev/null; then
	say "ci.log holds no ended lifecycle: was the test step run under lcwrap?"
	ok=0
fi
lcwrap status --file ci.log --mixed --all
if [ $ok = 0 ]; then
	say "FAIL: the CI log does not check out"
	exit 2
fi
exit "$rc"
