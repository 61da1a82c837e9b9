#!/usr/bin/env bash
# Issue 16: lcwrap top and lcwrap report on a 1M-line journal of 10k
# children, side by side with lcwrap status on the same file; the report's
# render time in headless Chromium; start-up of lcwrap with the view linked.
set -euo pipefail
source bench/lib.sh
N=${VIEW_EVENTS:-1000000}
C=${VIEW_CHILDREN:-10000}
f1="$BENCH_TMP/status-$N.jsonl"
[ -s "$f1" ] || "$GENEVENTS" -journal -n "$N" -children "$C" > "$f1"
TOPBENCH="$BENCH_TMP/topbench"
go build -o "$TOPBENCH" ./bench/topbench
runs=${VIEW_RUNS:-3}
st=$("$TIMEIT" -n "$runs" -warmup 0 -label status -- "$LCWRAP" status --all --journal "$f1")
sj=$("$TIMEIT" -n "$runs" -warmup 0 -label status-json -- "$LCWRAP" status --all --json --journal "$f1")
rp=$("$TIMEIT" -n "$runs" -warmup 0 -label report -- "$LCWRAP" report --journal "$f1" --html "$BENCH_TMP/view-report.html")
# top appends to its journal: a copy of its own.
tj="$BENCH_TMP/view-top.jsonl"
cp "$f1" "$tj"
top=$("$TOPBENCH" -top "$(dirname "$LCWRAP")/lcwrap-top" -journal "$tj" -rounds "${VIEW_ROUNDS:-20}" -events 100 -idle "${VIEW_IDLE:-60s}")
rm -rf "$tj" "$tj".*
IFS=$'\t' read -r paint paintcpu refmed refmax idle _ <<<"$top"
col() { echo "$1" | cut -f"$2"; }
echo "## View (issue 16)"
echo
echo "A journal of $N events of $C children ($(du -m "$f1" | cut -f1) MiB). Wall times are medians of $runs runs; on a shared"
echo "machine CPU (user+system) is the steadier measure, and the ratios use it."
echo
echo "| what | wall (s) | CPU (s) | ratio (CPU) | goal | command |"
echo "|---|---|---|---|---|---|"
awk -v w="$(col "$st" 3)" -v c="$(col "$st" 6)" 'BEGIN { printf "| status --all | %.2f | %.2f | 1.00× | — | `bin/lcwrap status --all --journal J` |\n", w/1000, c/1000 }'
awk -v w="$paint" -v c="$paintcpu" -v b="$(col "$st" 6)" 'BEGIN { printf "| top, first full frame | %.2f | %.2f | %.2f× | ≤ 1.5× | `bin/lcwrap top --journal J` in a pty of 80×24 (bench/topbench) |\n", w/1000, c/1000, c/b }'
awk -v w="$(col "$sj" 3)" -v c="$(col "$sj" 6)" 'BEGIN { printf "| status --all --json | %.2f | %.2f | 1.00× | — | `bin/lcwrap status --all --json --journal J` |\n", w/1000, c/1000 }'
awk -v w="$(col "$rp" 3)" -v c="$(col "$rp" 6)" -v b="$(col "$sj" 6)" 'BEGIN { printf "| report --html | %.2f | %.2f | %.2f× | ≤ 2× | `bin/lcwrap report --journal J --html r.html` |\n", w/1000, c/1000, c/b }'
echo
echo "top while the journal grows: each refresh after 100 new events (25 new children) costs **${refmed} ms** CPU (median of ${VIEW_ROUNDS:-20}; the most: ${refmax} ms; goal ≤ 5 ms);"
echo "idle (no new events; the new children's durations are in seconds, so the clock redraws their rows every --interval, 2 s by default): **${idle} ms CPU per minute** (goal ≤ 20 ms)."
echo "CPU of top is the sum of its threads' run time (/proc/PID/task/*/schedstat)."
echo
# The report in a browser: headless Chromium loads it and takes a
# screenshot; the time is Chromium's whole run, minus the same run on an
# empty page.
if command -v chromium >/dev/null; then
  shot() {
    local prof; prof=$(mktemp -d)
    local t0 t1
    t0=$(date +%s%N)
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
      --disable-sync --no-first-run --user-data-dir="$prof" --window-size=1280,900 --screenshot="$prof/s.png" "file://$1" >/dev/null 2>&1
    t1=$(date +%s%N)
    rm -rf "$prof"
    echo $(( (t1 - t0) / 1000000 ))
  }
  echo '<!DOCTYPE html><title>empty</title>' > "$BENCH_TMP/empty.html"
  e=$(shot "$BENCH_TMP/empty.html"); r=$(shot "$BENCH_TMP/view-report.html")
  e2=$(shot "$BENCH_TMP/empty.html"); r2=$(shot "$BENCH_TMP/view-report.html")
  e=$(( e < e2 ? e : e2 )); r=$(( r < r2 ? r : r2 ))
  echo "The report of all $C children ($(du -k "$BENCH_TMP/view-report.html" | cut -f1) KiB; the limit of 500 drawn, the ended rest counted per state): headless Chromium"
  echo "loads and screenshots it in $r ms, an empty page in $e ms: **$(( r - e )) ms** to render it (goal ≤ 2000 ms). Best of two runs each."
  echo
fi
echo "Start-up of the run path: the view's packages are linked into lcwrap (status, report), the TUI library only into"
echo "lcwrap-top. \`go list -deps ./cmd/lcwrap | grep -c charmbracelet\`: $(go list -deps ./cmd/lcwrap | grep -c charmbracelet || true)."
echo "Package initialisation of \`lcwrap --no-journal -- true\` (GODEBUG=inittrace=1, sum of the clock column, median of 20):"
inits() { for _ in $(seq 20); do GODEBUG=inittrace=1 "$1" --no-journal -- true 2>&1 >/dev/null | awk '/^init /{t+=$5} END {print t}'; done | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "lcwrap $(inits "$LCWRAP") ms; lcwrap-top would add bubbletea's own (measured once: $(GODEBUG=inittrace=1 "$(dirname "$LCWRAP")/lcwrap-top" -h 2>&1 | awk '/^init github.com\/charmbracelet|^init github.com\/muesli|^init github.com\/mattn|^init github.com\/rivo/{t+=$5} END {print t}') ms for the Charm packages alone)."
