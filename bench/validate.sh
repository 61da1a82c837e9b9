#!/usr/bin/env bash
# Issue 2: lcwrap validate vs jq -c . on the same 1M-event file; peak RSS at
# 1M and 10M lines; go test -bench for Validate.
set -euo pipefail
source bench/lib.sh
N=${VALIDATE_EVENTS:-1000000}
f1="$BENCH_TMP/events-1m.jsonl"
[ -s "$f1" ] || "$GENEVENTS" -n "$N" > "$f1"
avg=$(awk '{s+=length($0)+1} END {printf "%d", s/NR}' "$f1")
runs=${VALIDATE_RUNS:-3}
l=$("$TIMEIT" -n "$runs" -warmup 0 -label lcwrap -- "$LCWRAP" validate -q "$f1")
j=$("$TIMEIT" -n "$runs" -warmup 0 -label jq -- sh -c "jq -c . '$f1' >/dev/null")
lw=$(echo "$l" | cut -f3); jw=$(echo "$j" | cut -f3)
lrss=$(echo "$l" | cut -f7)
echo "## Validate (issue 2)"
echo
echo "$N events, $avg bytes each on average, median of $runs runs."
echo
echo "| tool | median wall (s) | events/s | peak RSS (MiB) | command |"
echo "|---|---|---|---|---|"
awk -v w="$lw" -v n="$N" -v r="$lrss" 'BEGIN { printf "| lcwrap validate | %.2f | %.0f | %.1f | `bin/lcwrap validate -q events-1m.jsonl` |\n", w/1000, n/(w/1000), r/1024 }'
awk -v w="$jw" -v n="$N" -v r="$(echo "$j" | cut -f7)" 'BEGIN { printf "| jq -c . | %.2f | %.0f | %.1f | `jq -c . events-1m.jsonl >/dev/null` |\n", w/1000, n/(w/1000), r/1024 }'
echo
echo "Ratio (jq time / lcwrap time): **$(ratio "$jw" "$lw")×** (goal ≥ 2×)."
echo
if [ "${VALIDATE_10M:-1}" = 1 ]; then
  f10="$BENCH_TMP/events-10m.jsonl"
  [ -s "$f10" ] || { for i in 1 2 3 4 5 6 7 8 9 10; do cat "$f1"; done > "$f10"; }
  t10=$("$TIMEIT" -n 1 -warmup 0 -label lcwrap10m -- "$LCWRAP" validate -q "$f10")
  echo "Peak RSS: 1M lines $(awk -v r="$lrss" 'BEGIN{printf "%.1f", r/1024}') MiB, 10M lines $(echo "$t10" | awk -F'\t' '{printf "%.1f", $7/1024}') MiB (flat: the reader holds one buffer, never the file)."
  echo
fi
echo '`go test -bench Validate ./internal/event`:'
echo
echo '```'
go test ./internal/event -run '^$' -bench 'Parse|Validate' -benchmem 2>/dev/null | grep -E '^Benchmark'
echo '```'
