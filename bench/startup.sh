#!/usr/bin/env bash
# Issue 3: start-up cost of `lcwrap run` (whole-process wall time wrapping
# /bin/true) against tini, dumb-init and bare true; ratios to tini.
set -euo pipefail
source bench/lib.sh
command -v tini >/dev/null && command -v dumb-init >/dev/null || ensure_peers
N=${STARTUP_RUNS:-300}
TRUE=$(type -P true)
J="$BENCH_TMP/startup-journal"
rm -rf "$J" && mkdir -p "$J"
# bin/lcwrap is `make build`'s (with the urfave_cli_no_template tag); the
# last row is a plain `go build`, what `go run`/`go install` without the
# tag produce.
PLAIN="$BENCH_TMP/lcwrap-plain-build"
go build -trimpath -o "$PLAIN" ./cmd/lcwrap
# The floor of any Go wrapper: runtime start, the six forwarded signals
# subscribed, fork/exec in a process group of its own, wait.
FLOOR="$BENCH_TMP/gofloor"
CGO_ENABLED=0 go build -trimpath -o "$FLOOR" ./bench/gofloor

# Rounds of 20 runs per command, interleaved, so that the noise of a shared
# machine falls on every row alike; the medians are over all runs.
row() { # label cmd...
  local label=$1; shift
  "$TIMEIT" -n 20 -warmup 2 -label "$label" -- "$@"
}
declare -A walls cpus rss
labels=("true" "tini -s" "dumb-init" "Go floor (bench/gofloor)" "lcwrap --no-journal" "lcwrap (default journal)" "lcwrap --no-journal, plain go build")
for ((r = 0; r < N / 20; r++)); do
  while IFS=$'\t' read -r label runs med min max cpu peak; do
    walls[$label]+="$med "; cpus[$label]+="$cpu "; rss[$label]=$peak
  done < <(
    row "true" "$TRUE"
    row "tini -s" tini -s -- "$TRUE"
    row "dumb-init" dumb-init "$TRUE"
    row "Go floor (bench/gofloor)" "$FLOOR" "$TRUE"
    row "lcwrap --no-journal" "$LCWRAP" --no-journal -- "$TRUE"
    LCWRAP_JOURNAL="$J/journal.jsonl" row "lcwrap (default journal)" "$LCWRAP" -- "$TRUE"
    row "lcwrap --no-journal, plain go build" "$PLAIN" --no-journal -- "$TRUE"
  )
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
tini_wall=$(echo "${walls[tini -s]}" | median)
tini_cpu=$(echo "${cpus[tini -s]}" | median)
floor_wall=$(echo "${walls[Go floor (bench/gofloor)]}" | median)
echo "## Start-up (issue 3)"
echo
echo "Whole-process wall time wrapping \`$TRUE\`: $N runs each, in interleaved rounds of 20;"
echo "the median of the rounds' medians. Goal: ≤ 1.45× tini without the journal, ≤ 1.8× with it"
echo "(the terminal event still fsynced)."
echo
echo "| command | median wall (ms) | wall ratio to tini | wall ratio to the Go floor | median CPU (ms) | CPU ratio to tini | peak RSS (KiB) |"
echo "|---|---|---|---|---|---|---|"
for l in "${labels[@]}"; do
  w=$(echo "${walls[$l]}" | median); c=$(echo "${cpus[$l]}" | median)
  printf '| %s | %.2f | %s× | %s× | %.2f | %s× | %s |\n' "$l" "$w" "$(ratio "$w" "$tini_wall")" "$(ratio "$w" "$floor_wall")" "$c" "$(ratio "$c" "$tini_cpu")" "${rss[$l]}"
done
echo
echo "Commands: \`bin/lcwrap --no-journal -- $TRUE\`, \`LCWRAP_JOURNAL=tmp/journal.jsonl bin/lcwrap -- $TRUE\`,"
echo "\`tini -s -- $TRUE\`, \`dumb-init $TRUE\`; bin/lcwrap is \`make build\`'s, built with \`-tags urfave_cli_no_template\`"
echo "(urfave/cli without text/template); the last row is a plain \`go build ./cmd/lcwrap\`."
echo "The journal row includes an fsync after the terminal event (\`--fsync terminal\`, the default)."
echo "CPU is user+system of the whole tree (the wrapper and true), steadier than wall time on a shared machine."
echo
# lcwrap emit from one shell loop, as a hook script calls it (default
# journal, default fsync: a heartbeat is not fsynced). Goal: >= 500 calls/s.
EJ="$BENCH_TMP/emit-loop"
rm -rf "$EJ" && mkdir -p "$EJ"
loop() { LCWRAP_JOURNAL="$EJ/journal.jsonl" sh -c 'i=0; while [ $i -lt 500 ]; do "$0" emit --child-id loop --kind heartbeat || exit 1; i=$((i+1)); done' "$LCWRAP"; }
floorloop() { sh -c 'i=0; while [ $i -lt 500 ]; do "$0" -append "$1" || exit 1; i=$((i+1)); done' "$FLOOR" "$EJ/floor.jsonl"; }
# best_rate FN: calls/s of the best of 3 runs of FN (500 calls each),
# after one that warms the page cache and the checkpoint.
best_rate() {
  local best=0 k t0 t1 r
  "$1"
  for k in 1 2 3; do
    t0=$(date +%s%N); "$1"; t1=$(date +%s%N)
    r=$(awk -v n=500 -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", n / (ns / 1e9) }')
    [ "$r" -gt "$best" ] && best=$r
  done
  echo "$best"
}
best=$(best_rate loop)
fbest=$(best_rate floorloop)
echo "\`lcwrap emit --child-id loop --kind heartbeat\` from one \`sh\` loop: $best calls/s (best of 3 loops of 500; goal ≥ 500)."
echo "The Go floor of the same loop (\`bench/gofloor -append FILE\`: a static Go program that appends one line under flock and exits): $fbest calls/s."
