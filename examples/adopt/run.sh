#!/usr/bin/env bash
# run.sh: adopt a long-running server that lcwrap did not start, and show
# what an observer that sees only the process can honestly record.
#
#   1. start a "server" (a shell loop) the way any supervisor would: this
#      script is its parent. It writes down every catchable signal it gets
#      and exits 7 on SIGTERM;
#   2. `lcwrap adopt` it: created (external), one diagnostic stating the
#      limits, and `lcwrap status` showing it as observed, not running;
#   3. stop it from its parent: the parent reads exit status 7, lcwrap
#      records `lost` with the exit status unknown;
#   4. adopt a second server and stop the *observation* (SIGTERM to
#      adopt): the server keeps running, the record says observation ended;
#      once its parent has stopped it, `lcwrap status --reconcile` finds
#      the process gone and records it as lost;
#   5. show that no signal from lcwrap ever reached either server.
#
# Exits non-zero with what differed. Works in a temp directory, removed at
# the end with every process it started (KEEP=1 keeps the directory).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { printf 'adopt-example: %s\n' "$*"; }
fail() {
	printf 'adopt-example: FAIL: %s\n' "$*" >&2
	exit 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/lcwrap-adopt-example.XXXXXX")"
pids=() # every process this script starts, stopped at the end if alive
cleanup() {
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	if [ "${KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
cd "$work"

unset LCWRAP_CHILD_ID LCWRAP_ROOT_CHILD_ID
export LCWRAP_JOURNAL="$work/journal.jsonl"
if ! command -v lcwrap >/dev/null 2>&1; then
	say "building lcwrap from $root"
	(cd "$root" && go build -o "$work/bin/lcwrap" ./cmd/lcwrap)
	PATH="$work/bin:$PATH"
fi

# server NAME: start server.sh NAME in the background (pid in $server),
# from a copy in the work directory (its command line is then the same on
# every machine).
cp "$here/server.sh" "$work/server.sh"
server() {
	./server.sh "$1" &
	server=$!
	pids+=("$server")
}

# wait_events CHILD N: until the journal holds N events of CHILD (10s).
wait_events() {
	local i=0
	until [ "$(lcwrap tail --child "$1" 2>/dev/null | wc -l)" -ge "$2" ]; do
		[ $i -lt 200 ] || fail "after 10s the journal holds fewer than $2 events of $1"
		sleep 0.05
		i=$((i + 1))
	done
}

# 1-2. Start the server, adopt it.
server web
say "started the server: pid $server (its parent is this script, not lcwrap)"
lcwrap adopt --child-id web "$server" &
adopt=$!
pids+=("$adopt")
wait_events web 2
say "lcwrap adopt $server: the stream so far (lcwrap tail --child web):"
lcwrap tail --child web
say "lcwrap status:"
lcwrap status | tee status.txt
grep -q '^web  *◎ observed ' status.txt || fail "status does not show web as observed"

# 3. The server's parent stops it and reads its exit status.
kill -TERM "$server"
set +e
wait "$server"
code=$?
wait "$adopt"
adopt_code=$?
set -e
say "the parent sent SIGTERM; the server's exit status, as its parent sees it: $code"
[ "$code" = 7 ] || fail "the server exited $code, want 7"
[ "$adopt_code" = 0 ] || fail "lcwrap adopt exited $adopt_code, want 0 (observed to the end)"
say "lcwrap adopt exited $adopt_code; its last event:"
lcwrap tail --child web | tail -n 1
lcwrap tail --child web | tail -n 1 | grep -q '"kind":"terminal","state":"lost"' || fail "the last event of web is not terminal/lost"
lcwrap tail --child web | tail -n 1 | grep -q '"exitStatus":"unknown"' || fail "the terminal event of web does not say the exit status is unknown"

# 4. Stopping the observation leaves the server alone.
server api
lcwrap adopt --child-id api "$server" &
adopt=$!
pids+=("$adopt")
wait_events api 2
kill -TERM "$adopt"
set +e
wait "$adopt"
adopt_code=$?
set -e
say "lcwrap adopt of pid $server got SIGTERM and exited $adopt_code; its last event:"
lcwrap tail --child api | tail -n 1
[ "$adopt_code" = 143 ] || fail "lcwrap adopt exited $adopt_code on SIGTERM, want 143"
kill -0 "$server" 2>/dev/null || fail "the server (pid $server) is gone after adopt stopped observing it"
say "the server (pid $server) is still running; its parent stops it"
kill -TERM "$server"
set +e
wait "$server"
code=$?
set -e
[ "$code" = 7 ] || fail "the second server exited $code, want 7"
say "lcwrap status: api is still observed, since nobody watched it end:"
lcwrap status
say "lcwrap status --reconcile checks the adopted processes that have not ended:"
lcwrap status --reconcile 2>&1
lcwrap tail --child api | tail -n 1 | grep -q '"source":"lcwrap-reconcile",.*"kind":"terminal","state":"lost"' ||
	fail "status --reconcile did not record api as lost"

# 5. Every signal either server received came from this script.
say "signals the servers received (signals.log):"
sed 's/^/  /' signals.log
[ "$(cat signals.log)" = "$(printf 'web TERM\napi TERM')" ] ||
	fail "the servers received signals other than their parent's SIGTERM"

say "lcwrap status --all:"
lcwrap status --all
lcwrap journal verify
lcwrap validate "$LCWRAP_JOURNAL"
say "PASS"
