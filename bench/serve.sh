#!/usr/bin/env bash
# Issue 26: lcwrap serve. 100 SSE clients against 100 `lcwrap tail --follow`
# processes on one journal receiving 1,000 events/s, side by side in one
# run (delivery p50/p99, CPU); GET /v1/children against
# `lcwrap status --all --json` on a journal of 10k children.
# SERVE_CLIENTS, SERVE_RATE, SERVE_SECS, SERVE_RUNS shorten it.
set -euo pipefail
source bench/lib.sh
BIN=$(dirname "$LCWRAP")
SERVEBENCH="$BENCH_TMP/servebench"
go build -o "$SERVEBENCH" ./bench/servebench
clients=${SERVE_CLIENTS:-100} rate=${SERVE_RATE:-1000} secs=${SERVE_SECS:-30} runs=${SERVE_RUNS:-15}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=$'\t' read -r total sgot tgot serr terr s50 s99 t50 t99 scpu tcpu wrote < <("$SERVEBENCH" stream -serve "$BIN/lcwrap-serve" -lcwrap "$LCWRAP" -clients "$clients" -rate "$rate" -secs "$secs")
load1=$(cut -d' ' -f1-3 /proc/loadavg)
j="$BENCH_TMP/serve-10k.jsonl"
[ -s "$j" ] || "$GENEVENTS" -journal -n 40000 -children 10000 > "$j"
IFS=$'\t' read -r gms sms n < <("$SERVEBENCH" children -serve "$BIN/lcwrap-serve" -lcwrap "$LCWRAP" -journal "$j" -runs "$runs")
load2=$(cut -d' ' -f1-3 /proc/loadavg)
echo "## lcwrap serve (issue 26)"
echo
echo "\`bench/serve.sh\` (SERVE_CLIENTS=$clients SERVE_RATE=$rate SERVE_SECS=$secs SERVE_RUNS=$runs). $(nproc) cores shared with other builds:"
echo "load average $load0 before, $load1 after the stream run, $load2 after the children run: absolute times are"
echo "inflated; read the ratios, measured side by side in the same run. The one server process shares the CPU with the"
echo "$clients tail processes under one scheduler, which on a loaded machine gives each process a like share: it favours the tails."
echo
echo "**Streams.** One journal, $rate events/s for $secs s (written in ${wrote} s, every 10 ms), $total lines after the cursor;"
echo "$clients SSE clients of one lcwrap-serve and $clients \`lcwrap tail --follow\` processes, started before the writing."
echo "Delivery is the time from the write to a client reading the line."
echo
echo "| | lines each got (least) | out of order, gaps, duplicates | delivery p50 | delivery p99 | CPU over the run (user+system) |"
echo "|---|---|---|---|---|---|"
echo "| $clients SSE clients, one server | $sgot of $total | $serr | ${s50} ms | ${s99} ms | ${scpu} s (the server) |"
echo "| $clients \`lcwrap tail --follow\` | $tgot of $total | $terr | ${t50} ms | ${t99} ms | ${tcpu} s (all $clients) |"
echo "| ratio (SSE / tail) | | | $(ratio "$s50" "$t50") | $(ratio "$s99" "$t99") (goal ≤ 2) | $(ratio "$scpu" "$tcpu") (goal ≤ 2) |"
echo
echo "**A picture of 10k children.** $n children ($(wc -l < "$j") lines); medians of $runs runs, alternating:"
echo
echo "| | wall (ms) |"
echo "|---|---|"
echo "| \`GET /v1/children?all=1\` (a new connection, the whole answer decoded) | $gms |"
echo "| \`lcwrap status --all --json\` (a process, reading the journal) | $sms |"
echo "| ratio | $(ratio "$gms" "$sms") (goal ≤ 1.2) |"
