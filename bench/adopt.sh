#!/usr/bin/env bash
# Issue 5: lcwrap adopt — exit-detection latency against tail --pid and
# procps pidwait; one lcwrap adopting 1000 sleeping processes (CPU while
# idle, peak RSS).
set -euo pipefail
source bench/lib.sh
ADOPTBENCH="$BENCH_TMP/adoptbench"
go build -o "$ADOPTBENCH" ./bench/adoptbench
N=${ADOPT_EXITS:-200}
PROCS=${ADOPT_PROCS:-1000}
IDLE=${ADOPT_IDLE:-30s}
scratch=$(mktemp -d "$BENCH_TMP/adopt.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "## Adopt (issue 5)"
echo
echo "Exit-detection latency over $N exits per watcher: from the moment the watched"
echo "process exits (its parent's wait returns) to the terminal event line read from"
echo "lcwrap's stdout, or the peer exiting. Goal for lcwrap: median ≤ 5 ms, p99 ≤ 20 ms."
echo "Reproduce: \`go run ./bench/adoptbench -lcwrap bin/lcwrap -n $N\`."
echo
"$ADOPTBENCH" -lcwrap "$LCWRAP" -mode latency -n "$N" -tmp "$scratch"
echo
echo "One lcwrap adopting $PROCS sleeping processes: time to adopt them all, CPU time"
echo "spent during $IDLE in which nothing happens (goal ~0), peak RSS over the whole"
echo "run, and time to record all $PROCS exits once they end together. The poll row is"
echo "the fallback where no pidfd is available (forced with the hidden --watch=poll)."
echo "Reproduce: \`go run ./bench/adoptbench -lcwrap bin/lcwrap -mode idle -procs $PROCS -idle $IDLE [-watch poll]\`."
echo
echo "| processes | watch | adopt all (ms) | CPU while idle (ms over $IDLE) | peak RSS (MiB) | all exits recorded (ms) | command |"
echo "|---|---|---|---|---|---|---|"
"$ADOPTBENCH" -lcwrap "$LCWRAP" -mode idle -procs "$PROCS" -idle "$IDLE" -watch auto
"$ADOPTBENCH" -lcwrap "$LCWRAP" -mode idle -procs "$PROCS" -idle "$IDLE" -watch poll
