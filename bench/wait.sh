#!/usr/bin/env bash
# Issue 25: lcwrap wait's latency beside an inotify-based tail -F | grep -m1,
# watch --exec's, and watch's memory under 1,000 transitions a second with
# a command that takes a second.
set -euo pipefail
source bench/lib.sh
WAITBENCH="$BENCH_TMP/waitbench"
go build -o "$WAITBENCH" ./bench/waitbench
N=${WAIT_N:-100}
RATE=${WAIT_RATE:-1000}
FOR=${WAIT_FOR:-60s}
scratch=$(mktemp -d "$BENCH_TMP/wait.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "## Wait and watch (issue 25)"
echo
echo "Latency over $N children, side by side in one run: from the moment a child's"
echo "terminal event was appended to the journal to the moment \`lcwrap wait CHILD\`"
echo "exits, an inotify-based \`tail -n0 -F | grep -m1\` exits (grep), and one"
echo "\`lcwrap watch --exec\` running throughout has run its command (it echoes the"
echo "event id). Goals: wait within a median of 20 ms, watch's command within 50 ms."
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)."
echo "Reproduce: \`go run ./bench/waitbench -lcwrap bin/lcwrap -n $N\`."
echo
"$WAITBENCH" -lcwrap "$LCWRAP" -mode latency -n "$N" -tmp "$scratch"
echo
echo "Memory: one \`lcwrap watch --exec 'sleep 1'\` while $RATE transitions a second"
echo "(100 children toggling running and waiting) are appended for $FOR; RSS sampled"
echo "every second. Goal: bounded (the queue drops the oldest, and says so)."
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Reproduce: \`go run ./bench/waitbench -lcwrap bin/lcwrap -mode memory -rate $RATE -for $FOR\`."
echo
"$WAITBENCH" -lcwrap "$LCWRAP" -mode memory -rate "$RATE" -for "$FOR" -tmp "$scratch"
