#!/usr/bin/env bash
# Issue 9: lcwrap status --all --json vs a jq program computing each child's
# last state, over a 1M-event journal of 10k children; peak RSS at 1M vs 10M
# events; the projection's own cost next to parsing's (go test -bench).
set -euo pipefail
source bench/lib.sh
N=${STATUS_EVENTS:-1000000}
C=${STATUS_CHILDREN:-10000}
f1="$BENCH_TMP/status-$N.jsonl"
[ -s "$f1" ] || "$GENEVENTS" -journal -n "$N" -children "$C" > "$f1"
runs=${STATUS_RUNS:-3}
jqruns=${STATUS_JQ_RUNS:-1}
jqprog='reduce inputs as $e ({}; .[$e.childId] = ($e.state // .[$e.childId]))'
l=$("$TIMEIT" -n "$runs" -warmup 0 -label lcwrap -- "$LCWRAP" status --all --json --journal "$f1")
j=$("$TIMEIT" -n "$jqruns" -warmup 0 -label jq -- jq -n "$jqprog" "$f1")
lw=$(echo "$l" | cut -f3); jw=$(echo "$j" | cut -f3)
lrss=$(echo "$l" | cut -f7)
# Both must give every child the same last state.
"$LCWRAP" status --all --json --journal "$f1" | jq -r '.children[] | "\(.childId) \(.state)"' | sort > "$BENCH_TMP/status-lcwrap.txt"
jq -n -r "$jqprog | to_entries[] | \"\(.key) \(.value)\"" "$f1" | sort > "$BENCH_TMP/status-jq.txt"
agree=no
cmp -s "$BENCH_TMP/status-lcwrap.txt" "$BENCH_TMP/status-jq.txt" && agree=yes
echo "## Status (issue 9)"
echo
echo "A journal of $N events of $C children ($(du -m "$f1" | cut -f1) MiB); lcwrap median of $runs runs, jq median of $jqruns."
echo
echo "| tool | median wall (s) | median CPU (s) | events/s | peak RSS (MiB) | command |"
echo "|---|---|---|---|---|---|"
awk -v w="$lw" -v c="$(echo "$l" | cut -f6)" -v n="$N" -v r="$lrss" 'BEGIN { printf "| lcwrap status | %.2f | %.2f | %.0f | %.1f | `bin/lcwrap status --all --json --journal status-%d.jsonl` |\n", w/1000, c/1000, n/(w/1000), r/1024, n }'
awk -v w="$jw" -v c="$(echo "$j" | cut -f6)" -v n="$N" -v r="$(echo "$j" | cut -f7)" 'BEGIN { printf "| jq reduce | %.2f | %.2f | %.0f | %.1f | `jq -n '"'"'reduce inputs as $e ({}; .[$e.childId] = ($e.state // .[$e.childId]))'"'"' status-%d.jsonl` |\n", w/1000, c/1000, n/(w/1000), r/1024, n }'
echo
echo "Ratio (jq time / lcwrap time): **$(ratio "$jw" "$lw")×** (goal ≥ 3×). Same last state for every child: $agree."
echo
if [ "${STATUS_10M:-1}" = 1 ]; then
  N10=$((N * 10))
  f10="$BENCH_TMP/status-$N10.jsonl"
  [ -s "$f10" ] || "$GENEVENTS" -journal -n "$N10" -children "$C" > "$f10"
  t10=$("$TIMEIT" -n 1 -warmup 0 -label lcwrap10 -- "$LCWRAP" status --all --json --journal "$f10")
  echo "Peak RSS with $C children: $N events $(awk -v r="$lrss" 'BEGIN{printf "%.1f", r/1024}') MiB, $N10 events $(echo "$t10" | awk -F'\t' '{printf "%.1f", $7/1024}') MiB in $(echo "$t10" | awk -F'\t' '{printf "%.1f", $3/1000}') s (flat: the projection keeps one record per child, never the events)."
  echo
fi
echo 'The projection alone (events already parsed) next to parsing, `go test -bench` in `./internal/projection` and `./internal/event`:'
echo
echo '```'
go test ./internal/projection -run '^$' -bench 'Apply' -benchmem 2>/dev/null | grep -E '^Benchmark'
go test ./internal/event -run '^$' -bench 'Parse' -benchmem 2>/dev/null | grep -E '^Benchmark'
echo '```'
