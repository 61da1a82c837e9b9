#!/usr/bin/env bash
# A morning's background work in one journal, for `lcwrap top` and
# `lcwrap report`: an agent run (the launched process, its session and two
# sub-agents, one of them waiting for a permission), a flaky build retried
# until it passes, a test run that fails, an adopted server, and a job whose
# wrapper is frozen so that it goes stale.
#
#   examples/view/demo.sh start DIR   # starts it all; the journal is DIR/journal.jsonl
#   examples/view/demo.sh stop DIR    # lets everything end
#
# The session and sub-agent events are written with `lcwrap emit` (the way a
# hook script relays them), so their capabilities are all unknown.
set -euo pipefail
export LCWRAP=${LCWRAP:-lcwrap}
cmd=${1:?usage: demo.sh start|stop DIR}
dir=${2:?usage: demo.sh start|stop DIR}
mkdir -p "$dir"
export LCWRAP_JOURNAL="$dir/journal.jsonl"
gate="$dir/gate"

if [ "$cmd" = stop ]; then
  rm -f "$gate"
  [ -f "$dir/frozen.pid" ] && kill -CONT "$(cat "$dir/frozen.pid")" 2>/dev/null || true
  [ -f "$dir/server.pid" ] && kill "$(cat "$dir/server.pid")" 2>/dev/null || true
  exit 0
fi
touch "$gate"
wait_gate='while [ -e "$0" ]; do sleep 0.2; done'

# The agent: a launched process whose session and sub-agents report
# through emit. Inside it, LCWRAP_CHILD_ID makes agent-1 their parent.
"$LCWRAP" --child-id agent-1 --heartbeat 1s -- sh -c '
  e() { "$LCWRAP" emit --source claude-code "$@"; }
  e --child-id session-1 --kind created --state created
  e --child-id session-1 --kind state_changed --state starting
  e --child-id session-1 --kind state_changed --state running
  e --child-id session-1 --kind activity --activity "Read src/journal/read.go"
  for s in sub-explore sub-tests; do
    e --child-id $s --parent-child-id session-1 --kind created --state created
    e --child-id $s --kind state_changed --state starting
    e --child-id $s --kind state_changed --state running
  done
  e --child-id sub-explore --kind activity --activity "Grep: Follow\\("
  e --child-id sub-tests --kind activity --activity "Bash: go test ./journal/..."
  e --child-id sub-tests --kind state_changed --state waiting
  e --child-id sub-tests --kind activity --activity "permission: Bash rm -rf bench/out"
  while [ -e "$1" ]; do sleep 0.2; done
  e --child-id sub-tests --kind state_changed --state running
  e --child-id sub-tests --kind terminal --state completed --details "{\"claim\":\"agent-reported-end\"}"
  e --child-id sub-explore --kind terminal --state completed --details "{\"claim\":\"agent-reported-end\"}"
  e --child-id session-1 --kind terminal --state completed --details "{\"claim\":\"agent-reported-end\"}"
' demo "$gate" >/dev/null 2>&1 &

# A flaky build: two failed attempts, then one that exits 0.
"$LCWRAP" --child-id build-7 --restart on-failure --backoff 200ms --activity output -- \
  sh -c 'n=$(cat "$0" 2>/dev/null || echo 0); echo $((n+1)) > "$0"; echo "compiling attempt $n"; sleep 0.5; [ "$n" -ge 2 ]' "$dir/count" >/dev/null 2>&1 &

# A test run that fails.
"$LCWRAP" --child-id test-3 --activity output -- sh -c 'echo "--- FAIL: TestFollow (0.21s)"; sleep 1; exit 1' >/dev/null 2>&1 &

# An adopted server: lcwrap sees its presence, nothing more.
sleep 3600 &
echo $! > "$dir/server.pid"
"$LCWRAP" adopt --child-id server-9 "$!" >/dev/null 2>&1 &

# A job whose wrapper freezes: its heartbeats stop, so it goes stale.
"$LCWRAP" --child-id fetch-2 --heartbeat 1s -- sh -c "$wait_gate" "$gate" >/dev/null 2>&1 &
echo $! > "$dir/frozen.pid"
for _ in $(seq 50); do grep -q '"childId":"fetch-2".*"state":"running"' "$LCWRAP_JOURNAL" 2>/dev/null && break; sleep 0.1; done
kill -STOP "$(cat "$dir/frozen.pid")"

# A long build that keeps running.
"$LCWRAP" --child-id lint-4 --heartbeat 1s --activity output -- sh -c 'while [ -e "$0" ]; do echo "checking package $((i=i+1))"; sleep 1; done' "$gate" >/dev/null 2>&1 &
echo "journal: $LCWRAP_JOURNAL"
