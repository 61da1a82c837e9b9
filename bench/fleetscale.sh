#!/usr/bin/env bash
# Issue 24's scale figures: 100 hosts × 100 children × FLEET_SCALE_EVENTS
# events (100: 1M) as a gateway's rotated OTLP-JSON output (body-only
# records, as examples/otel-collector/agent.yaml ships them) and as one
# journal of the same events; status --fleet --all vs status --all (time,
# peak memory), top --fleet's first frame vs status --fleet --all, and
# top --fleet's CPU per refresh with 100 new events, idle, and from an
# append to the frame (bench/topbench), beside the one-journal top on a
# copy of the journal. FLEET_SCALE_BASE=DIR runs an earlier build's
# binaries too, in the same run.
# Not in make bench's default sections (generating 1M events takes
# minutes): BENCH_SECTIONS=fleetscale make bench, or bash bench/fleetscale.sh.
set -euo pipefail
source bench/lib.sh
E=${FLEET_SCALE_EVENTS:-100}
D="$BENCH_TMP/fleetscale-$E"
if [ ! -s "$D/journal.jsonl" ]; then
  rm -rf "$D"; mkdir -p "$D"
  FLEET_GEN_DIR="$D" FLEET_GEN_EVENTS="$E" go test -count=1 -timeout 60m -run TestGenerateScale ./internal/fleet >&2
fi
runs=${FLEET_SCALE_RUNS:-3}
rounds=${FLEET_SCALE_ROUNDS:-10}
idle=${FLEET_SCALE_IDLE:-30s}
# FLEET_SCALE_BASE=DIR (a directory holding an earlier build's lcwrap and
# lcwrap-top) measures that build too, in the same run: before and after
# side by side on the same load.
BASE=${FLEET_SCALE_BASE:-}
TOPBENCH="$BENCH_TMP/topbench"
go build -o "$TOPBENCH" ./bench/topbench
load0=$(cut -d' ' -f1-3 /proc/loadavg)
j=$("$TIMEIT" -n "$runs" -warmup 0 -label journal -- "$LCWRAP" status --all --json --journal "$D/journal.jsonl")
f=$("$TIMEIT" -n "$runs" -warmup 0 -label fleet -- "$LCWRAP" status --fleet "$D/gw" --all --json)
[ -z "$BASE" ] || fb=$("$TIMEIT" -n "$runs" -warmup 0 -label fleet-base -- "$BASE/lcwrap" status --fleet "$D/gw" --all --json)
# top --fleet appends its refreshes to the live gateway file: cut it back
# after. The one-journal top, for reference, runs on a copy of the journal
# (it appends to it).
live="$D/gw/gateway.jsonl"
size=$(stat -c %s "$live")
topfleet() { "$TOPBENCH" -top "$1" -fleet "$D/gw" -rounds "$rounds" -events 100 -idle "$idle"; truncate -s "$size" "$live"; }
topjournal() {
  local jd="$BENCH_TMP/fleetscale-journal-top"
  rm -rf "$jd"; mkdir -p "$jd"; cp "$D/journal.jsonl" "$jd/"
  # (a short path: top's title, cut at 80 columns, must keep "children:")
  (cd "$jd" && "$TOPBENCH" -top "$1" -journal journal.jsonl -rounds "$rounds" -events 100 -idle "$idle")
  rm -rf "$jd"
}
top=$(topfleet "$(dirname "$LCWRAP")/lcwrap-top")
jtop=$(topjournal "$(dirname "$LCWRAP")/lcwrap-top")
if [ -n "$BASE" ]; then
  topb=$(topfleet "$BASE/lcwrap-top")
  jtopb=$(topjournal "$BASE/lcwrap-top")
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=$'\t' read -r paint paintcpu refmed refmax idlecpu lag <<<"$top"
col() { echo "$1" | cut -f"$2"; }
records=$(( 100 * 100 * E ))
echo "## Fleet scale (issue 24)"
echo
echo "100 hosts × 100 children × $E events = $records events: a gateway's output of $(ls "$D/gw" | wc -l) files ($(du -sm "$D/gw" | cut -f1) MiB, body-only"
echo "records, one request per host and child) and one journal of the same events ($(du -m "$D/journal.jsonl" | cut -f1) MiB, child ids made unique"
echo "by host). Medians of $runs runs; ratios of CPU (the steadier measure on a shared machine). Load average $load0 at the start, $load1 at the end."
echo
echo "| what | wall (s) | CPU (s) | peak RSS (MiB) | ratio | goal | command |"
echo "|---|---|---|---|---|---|---|"
awk -v w="$(col "$j" 3)" -v c="$(col "$j" 6)" -v r="$(col "$j" 7)" 'BEGIN { printf "| status --all, one journal | %.2f | %.2f | %.0f | 1.00× | — | `lcwrap status --all --json --journal journal.jsonl` |\n", w/1000, c/1000, r/1024 }'
awk -v w="$(col "$f" 3)" -v c="$(col "$f" 6)" -v r="$(col "$f" 7)" -v bc="$(col "$j" 6)" -v br="$(col "$j" 7)" 'BEGIN { printf "| status --fleet --all | %.2f | %.2f | %.0f | %.2f× CPU, %.2f× RSS | ≤ 1.5×, ≤ 2× | `lcwrap status --fleet gw --all --json` |\n", w/1000, c/1000, r/1024, c/bc, r/br }'
[ -z "$BASE" ] || awk -v w="$(col "$fb" 3)" -v c="$(col "$fb" 6)" -v r="$(col "$fb" 7)" -v bc="$(col "$j" 6)" -v br="$(col "$j" 7)" 'BEGIN { printf "| status --fleet --all, the earlier build | %.2f | %.2f | %.0f | %.2f× CPU, %.2f× RSS | — | the same, `$FLEET_SCALE_BASE/lcwrap` |\n", w/1000, c/1000, r/1024, c/bc, r/br }'
awk -v w="$paint" -v c="$paintcpu" -v bc="$(col "$f" 6)" 'BEGIN { printf "| top --fleet, first full frame | %.2f | %.2f | — | %.2f× CPU of status --fleet | ≤ 1.5× | `lcwrap top --fleet gw` in a pty of 80×24 (bench/topbench -fleet) |\n", w/1000, c/1000, c/bc }'
echo
echo "A refresh after 100 new events (one request, 25 new children; median of $rounds, max), idle CPU (scaled to a minute, measured over"
echo "the $idle after the last refresh) and the time from an append to the frame showing it (median):"
echo
echo "| top | refresh CPU (ms) | max (ms) | idle (ms CPU/min) | append → frame (ms) | goal |"
echo "|---|---|---|---|---|---|"
row() { IFS=$'\t' read -r _ _ m x i l <<<"$2"; echo "| $1 | $m | $x | $i | $l | $3 |"; }
row "top --fleet gw" "$top" "≤ 5 ms a refresh"
row "top, one journal of the same events (reference)" "$jtop" "—"
if [ -n "$BASE" ]; then
  row "top --fleet gw, the earlier build" "$topb" "—"
  row "top, one journal, the earlier build" "$jtopb" "—"
fi
