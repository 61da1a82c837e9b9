#!/usr/bin/env bash
# Issue 3: what lcwrap costs while the command does nothing: a wrapped
# `sleep` with the default heartbeat (10s), against the bare sleep.
set -euo pipefail
source bench/lib.sh
S=${IDLE_SECONDS:-60}
J="$BENCH_TMP/idle-journal"
rm -rf "$J" && mkdir -p "$J"
# Both run at once: the minute is spent only once.
LCWRAP_JOURNAL="$J/journal.jsonl" "$TIMEIT" -n 1 -warmup 0 -label lcwrap -- "$LCWRAP" -- sleep "$S" > "$BENCH_TMP/idle-lcwrap" &
"$TIMEIT" -n 1 -warmup 0 -label sleep -- sleep "$S" > "$BENCH_TMP/idle-sleep" &
wait
IFS=$'\t' read -r _ _ lw _ _ lc lr < "$BENCH_TMP/idle-lcwrap"
IFS=$'\t' read -r _ _ sw _ _ sc sr < "$BENCH_TMP/idle-sleep"
beats=$(grep -c '"kind":"heartbeat"' "$J/journal.jsonl" || true)
echo "## Idle cost (issue 3)"
echo
echo "\`LCWRAP_JOURNAL=tmp/journal.jsonl bin/lcwrap -- sleep $S\` (default heartbeat: 10s) beside a bare \`sleep $S\`."
echo "CPU is user+system of the whole tree (lcwrap and its sleep). Goal: < 20 ms over the minute."
echo
echo "| command | wall (s) | CPU (ms) | peak RSS (KiB) | heartbeats written |"
echo "|---|---|---|---|---|"
awk -v w="$lw" -v c="$lc" -v r="$lr" -v b="$beats" -v s="$S" 'BEGIN { printf "| lcwrap -- sleep %s | %.2f | %.1f | %s | %s |\n", s, w/1000, c, r, b }'
awk -v w="$sw" -v c="$sc" -v r="$sr" -v s="$S" 'BEGIN { printf "| sleep %s | %.2f | %.1f | %s | — |\n", s, w/1000, c, r }'
