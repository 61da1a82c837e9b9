#!/usr/bin/env bash
# Issue 15: one Claude Code hook call as the agent pays for it (a process
# per call, payload on stdin, until it exits): lcwrap hook claude-code on
# an empty and on a large journal, against the retired shell hook (sh, jq
# and lcwrap emit) it replaced; ratios to the Go hook on an empty journal.
set -euo pipefail
source bench/lib.sh
N=${HOOK_RUNS:-300}
D="$BENCH_TMP/hook"
rm -rf "$D" && mkdir -p "$D"
HOOKBENCH="$BENCH_TMP/hookbench"
go build -o "$HOOKBENCH" ./bench/hookbench
# The large journal: 300,000 lines, checked once so that its checkpoint
# exists (a hook call must not pay for a journal it never reads).
"$GENEVENTS" -n 300000 -children 3000 -journal >"$D/big.jsonl"
echo '{"session_id":"warm","hook_event_name":"SessionStart"}' | "$LCWRAP" hook claude-code --journal "$D/big.jsonl"
git show ea70c13:examples/hooks/lcwrap-hook.sh >"$D/lcwrap-hook.sh"
chmod +x "$D/lcwrap-hook.sh"
echo "## Hook call (issue 15)"
echo
echo "Wall time of one \`lcwrap hook claude-code\` call, process start to exit, replaying the"
echo "recorded payloads of internal/agent/claudecode/testdata/hooks as new sessions; $N calls each."
echo "Goal: median ≤ 10 ms, on a large journal too. The peer is the shell hook it retired."
echo
echo "| handler | calls | median (ms) | p99 (ms) | median ratio |"
echo "|---|---|---|---|---|"
PATH="$(dirname "$LCWRAP"):$PATH" LCWRAP_JOURNAL="$D/shell.jsonl" "$HOOKBENCH" -n "$N" \
  "lcwrap hook claude-code, empty journal=$LCWRAP hook claude-code --journal $D/empty.jsonl" \
  "lcwrap hook claude-code, 300k-line journal=$LCWRAP hook claude-code --journal $D/big.jsonl" \
  "retired shell hook (sh, jq, lcwrap emit), empty journal=/bin/sh $D/lcwrap-hook.sh"
echo
echo "Command: \`HOOK_RUNS=$N BENCH_SECTIONS=hook make bench\`. The shell hook handled 5 of the 13"
echo "events (the others cost it one jq call and a message)."
