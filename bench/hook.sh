#!/usr/bin/env bash
# Issue 15: one Claude Code hook call as the agent pays for it (a process
# per call, payload on stdin, until it exits): lcwrap hook claude-code on
# an empty and on a large journal, against the retired shell hook (sh, jq
# and lcwrap emit) it replaced; ratios to the Go hook on an empty journal.
# Issue 29 (HOOK_PART=relay for it alone): one relayed command hook call,
# Gemini's and Copilot's beside Claude Code's, each handing its payload to
# the hook server of a live wrapper of its own (lcwrap --agent NAME), in
# one interleaved run with the floors: a bare Go process that reads its
# stdin (bench/gofloor -drain) and lcwrap's own start (lcwrap --version).
set -euo pipefail
source bench/lib.sh
N=${HOOK_RUNS:-300}
D="$BENCH_TMP/hook"
rm -rf "$D" && mkdir -p "$D"
HOOKBENCH="$BENCH_TMP/hookbench"
go build -o "$HOOKBENCH" ./bench/hookbench
if [ "${HOOK_PART:-}" != relay ]; then
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
fi
[ -n "${HOOK_PART:-}" ] && [ "$HOOK_PART" != relay ] && exit 0
[ -z "${HOOK_PART:-}" ] && echo
GOFLOOR="$BENCH_TMP/gofloor"
go build -o "$GOFLOOR" ./bench/gofloor
# One wrapper per agent, its command a script that writes its environment
# (the hook URL and token lcwrap gave it) and sleeps; the script ignores
# what a driver adds to its arguments.
printf '#!/bin/sh\nenv >"$HOOK_ENV_OUT.tmp" && mv "$HOOK_ENV_OUT.tmp" "$HOOK_ENV_OUT"\nexec sleep 3600\n' >"$D/envdump.sh"
chmod +x "$D/envdump.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
for a in claude-code gemini copilot; do
  HOOK_ENV_OUT="$D/$a.env" "$LCWRAP" --journal "$D/relay.jsonl" --agent "$a" -- "$D/envdump.sh" 2>"$D/$a.err" &
  pids+=($!)
done
for a in claude-code gemini copilot; do
  for _ in $(seq 100); do [ -s "$D/$a.env" ] && break; sleep 0.1; done
done
envof() { grep -E '^LCWRAP_HOOK_(URL|TOKEN)=' "$D/$1.env" | tr '\n' ' '; }
echo "## Relayed hook call (issue 29)"
echo
echo "Wall time of one relayed command hook call (\`lcwrap hook AGENT --relay\`, what lcwrap installs for a run),"
echo "process start to exit, each agent's recorded payloads handed to the hook server of a live wrapper of its own"
echo "(\`lcwrap --agent AGENT\`), interleaved call by call with the floors; $N calls each. Goal (issue 29): a"
echo "command hook call adds ≤ 10 ms median. Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| handler | calls | median (ms) | p99 (ms) | median ratio |"
echo "|---|---|---|---|---|"
"$HOOKBENCH" -n "$N" \
  "bare Go process reading stdin (bench/gofloor -drain)=$GOFLOOR -drain" \
  "lcwrap --version (lcwrap's own start)=$LCWRAP --version" \
  "lcwrap hook claude-code --relay=$(envof claude-code) $LCWRAP hook claude-code --relay" \
  "lcwrap hook gemini --relay=$(envof gemini) PAYLOADS=internal/agent/gemini/testdata/tui $LCWRAP hook gemini --relay" \
  "lcwrap hook copilot --event NAME --relay=$(envof copilot) PAYLOADS=internal/agent/copilot/testdata/agent $LCWRAP hook copilot --event {event} --relay"
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg). Command: \`HOOK_RUNS=$N HOOK_PART=relay bash bench/hook.sh\`"
echo "(bin/lcwrap built by \`make build\`)."
