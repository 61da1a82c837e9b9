#!/usr/bin/env bash
# Issue 27: `lcwrap adopt --agent claude-code` following 50 synthetic
# background sessions and one real one (claude --bg against the mock API),
# CPU per idle minute beside an idle Go process of the same shape.
set -euo pipefail
source bench/lib.sh
CLAUDEFLEET="$BENCH_TMP/claudefleet"
go build -o "$CLAUDEFLEET" ./bench/claudefleet
IDLE=${CLAUDEFLEET_IDLE:-3m}
RUNS=${CLAUDEFLEET_RUNS:-2}
echo "## Claude Code fleet idle (issue 27)"
echo
echo "\`lcwrap adopt --agent claude-code\` (a journal, no pid) following 50 synthetic background sessions"
echo "(job directories with a state.json, pid registry files, listed beside the real one) and one real"
echo "\`claude --bg\` session (claude 2.1.332 against internal/anthropicmock on 127.0.0.1), once they are"
echo "recorded and the registry is quiet: CPU per minute over a $IDLE window — the follower's threads"
echo "(/proc/PID/task/*/schedstat) and with its children (the \`claude agents --json\` listings), the"
echo "listings made, the changes its registry directories saw, and an idle Go process of the same shape"
echo "(signals subscribed, one inotify read pending) beside it. Goal: ≤ 20 ms per minute."
echo "Reproduce: \`go run ./bench/claudefleet -lcwrap bin/lcwrap -idle $IDLE\`."
echo
echo "| sessions | follower (ms/min) | with its listings (ms/min) | idle Go floor (ms/min) | listings | registry changes | load average |"
echo "|---|---|---|---|---|---|---|"
for _ in $(seq "$RUNS"); do
  "$CLAUDEFLEET" -lcwrap "$LCWRAP" -idle "$IDLE" -tmp "$BENCH_TMP"
done
