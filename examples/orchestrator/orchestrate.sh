#!/bin/sh
# An orchestrator that drives lcwrap through its command line alone, as the
# lifecycle contract's adapter interface asks:
#
#   subscribe    ->  lcwrap tail --follow
#   getSnapshot  ->  lcwrap snapshot
#   cancel       ->  lcwrap cancel
#
# It starts two wrapped commands and adopts a third process, takes a
# snapshot, cancels one wrapped child, is refused on the adopted one, and
# follows the stream until all three have ended. Everything happens in a
# fresh temporary directory; nothing it starts outlives it.
#
# Usage: examples/orchestrator/orchestrate.sh   (lcwrap on PATH, or LCWRAP=path)
set -eu

LCWRAP=${LCWRAP:-lcwrap}
work=$(mktemp -d "${TMPDIR:-/tmp}/orchestrator.XXXXXX")
export LCWRAP_JOURNAL="$work/journal.jsonl"
stream="$work/stream.jsonl"
gate="$work/gate"
started=""

# End whatever is still running of what this script started, by pid.
cleanup() {
	for pid in $started; do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# await PATTERN: wait until a line of the stream matches (at most 30 s).
await() {
	n=0
	until grep -q "$1" "$stream" 2>/dev/null; do
		n=$((n + 1))
		if [ "$n" -gt 300 ]; then
			echo "orchestrator: nothing matched $1 within 30s" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# A command that waits for the gate file, then exits 0.
waiter='until [ -e "$1" ]; do sleep 0.1; done'

echo "== subscribe: lcwrap tail --follow"
"$LCWRAP" tail --follow >"$stream" &
tail_pid=$!
started="$started $tail_pid"

echo "== start: two wrapped commands, one process to adopt"
"$LCWRAP" --child-id agent -- sleep 300 &
agent_pid=$!
"$LCWRAP" --child-id build -- sh -c "$waiter" sh "$gate" &
build_pid=$!
sh -c "$waiter" sh "$gate" &
worker_pid=$!
started="$started $agent_pid $build_pid $worker_pid"
"$LCWRAP" adopt --child-id worker "$worker_pid" &
adopt_pid=$!
started="$started $adopt_pid"
await '"childId":"agent".*"state":"running"'
await '"childId":"build".*"state":"running"'
await '"childId":"worker".*"kind":"diagnostic"'
echo "agent, build: running; worker: adopted (pid $worker_pid, which this script started)"

echo "== getSnapshot: lcwrap snapshot --reason session_open"
"$LCWRAP" snapshot --reason session_open

echo "== cancel agent"
"$LCWRAP" cancel agent --reason "superseded by a newer run" --wait 30s

echo "== cancel worker (adopted: lcwrap has no authority over it)"
if "$LCWRAP" cancel worker --reason "not ours to stop"; then
	echo "orchestrator: cancelling an adopted process was not refused" >&2
	exit 1
else
	echo "refused: exit $?"
fi

echo "== release build and worker: both exit 0 on their own"
touch "$gate"
status=0
wait "$worker_pid" || status=$?
echo "worker exited $status (its parent, this script, sees that; lcwrap cannot)"

echo "== follow the stream to the end"
await '"childId":"agent","lineage":[^}]*},"kind":"terminal"'
await '"childId":"build","lineage":[^}]*},"kind":"terminal"'
await '"childId":"worker","lineage":[^}]*},"kind":"terminal"'
for pid in $agent_pid $build_pid $adopt_pid; do
	wait "$pid" || true
done
kill "$tail_pid"
wait "$tail_pid" || true
started=""
# One line per event: line number, source, child, kind, state.
sed -E 's/.*"source":"([^"]*)","sourceEpoch":"[^"]*","childId":"([^"]*)",.*"kind":"([^"]*)"(,"state":"([^"]*)")?.*"journalSequence":([0-9]+)}$/\6 \1 \2 \3 \5/' "$stream"

echo "== how each ended"
grep '"kind":"terminal"' "$stream"
rm -rf "$work"
