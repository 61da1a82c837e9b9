#!/usr/bin/env bash
# Issue 21's twins, measured side by side in one run: each hand-written
# twin against the library or standard-library path it stands beside, in
# builds of lcwrap that differ by that twin alone (go build -overlay with
# bench/twins/*.go.txt; the repository's files are not touched):
#
#   hand      lcwrap as it is
#   cli       the quick flag reader off: urfave/cli reads every line
#   jsondec   the event envelope decoded by encoding/json (the envelope's
#             encoder and the details encoders are encoding/json's
#             already: they won no row)
#   base      with TWINS_BASE=REV, lcwrap as it was at REV (git archive
#             into a scratch directory): the before of a change
#
# Rows: start-up wrapping /bin/true (interleaved rounds of 20, the median
# of the rounds' medians, as bench/startup.sh), without and with the
# journal, against the Go floor (bench/gofloor); peak RSS; the emit loop
# against `gofloor -append`; validate against `jq -c .`; status --all
# against jq's reduce. A twin stays only where it wins a row by 0.05× the
# floor (10% of a throughput figure).
#
# Not in make bench's default sections: run it alone, as
# STARTUP_RUNS=300 bash bench/twins.sh (TWINS_EVENTS sets the size of the
# validate and status files, 200000 by default; EMIT_CALLS the emit
# loop's length, 500; TWINS_SECTIONS which sections run: startup emit
# throughput; TWINS_BASE a revision to build beside, as above).
set -euo pipefail
source bench/lib.sh
N=${STARTUP_RUNS:-300}
EV=${TWINS_EVENTS:-200000}
export EMIT_CALLS=${EMIT_CALLS:-500}
TRUE=$(type -P true)
D="$BENCH_TMP/twins"
rm -rf "$D" && mkdir -p "$D/src" "$D/j"

# The overlays: a copy of each file changed (a function renamed out of the
# way, or the quick reader declining every line) and the variant's file.
cp cmd/lcwrap/fastflags.go "$D/src/fastflags.go"
sed -i 's/^func readQuick(.*{$/&\n\treturn nil, false/' "$D/src/fastflags.go"
sed 's/^func decodeFlat(/func decodeFlatHand(/' internal/event/decode.go >"$D/src/decode.go"
grep -q 'return nil, false' "$D/src/fastflags.go" && grep -q decodeFlatHand "$D/src/decode.go" ||
  { echo "twins: a function to replace was not found" >&2; exit 1; }
overlay() { # name "repo-path=file"...
  local name=$1 sep="" kv
  shift
  { printf '{"Replace":{'
    for kv in "$@"; do printf '%s"%s/%s":"%s"' "$sep" "$PWD" "${kv%%=*}" "${kv#*=}"; sep=,; done
    printf '}}\n'; } >"$D/overlay-$name.json"
}
overlay hand
overlay cli "cmd/lcwrap/fastflags.go=$D/src/fastflags.go"
overlay jsondec "internal/event/decode.go=$D/src/decode.go" "internal/event/zz_twins_decoder.go=$PWD/bench/twins/decoder.go.txt"
variants=(hand cli jsondec)
for v in "${variants[@]}"; do
  CGO_ENABLED=0 go build -overlay "$D/overlay-$v.json" -trimpath -tags urfave_cli_no_template -o "$D/lcwrap-$v" ./cmd/lcwrap
done
if [ -n "${TWINS_BASE:-}" ]; then
  mkdir -p "$D/base-src"
  git archive "$TWINS_BASE" | tar -x -C "$D/base-src"
  (cd "$D/base-src" && CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_template -o "$D/lcwrap-base" ./cmd/lcwrap)
  variants+=(base)
fi
FLOOR="$D/gofloor"
CGO_ENABLED=0 go build -trimpath -o "$FLOOR" ./bench/gofloor
for v in "${variants[@]}"; do
  "$D/lcwrap-$v" --no-journal -- "$TRUE"
  LCWRAP_JOURNAL="$D/j/$v.jsonl" "$D/lcwrap-$v" -- "$TRUE"
done

# Start-up: every row in each round, so the machine's noise falls on all.
SECTIONS=${TWINS_SECTIONS:-startup emit throughput}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { tr ' ' '\n' | grep . | sort -g | head -1; }
echo "## Twins (issue 21)"
echo
if [[ " $SECTIONS " == *" startup "* ]]; then
declare -A walls mins cpus rss
labels=("Go floor")
for v in "${variants[@]}"; do labels+=("$v --no-journal" "$v journal"); done
for ((r = 0; r < N / 20; r++)); do
  while IFS=$'\t' read -r label runs med min max cpu peak; do
    walls[$label]+="$med "; mins[$label]+="$min "; cpus[$label]+="$cpu "; rss[$label]+="$peak "
  done < <(
    "$TIMEIT" -n 20 -warmup 2 -label "Go floor" -- "$FLOOR" "$TRUE"
    for v in "${variants[@]}"; do
      "$TIMEIT" -n 20 -warmup 2 -label "$v --no-journal" -- "$D/lcwrap-$v" --no-journal -- "$TRUE"
      LCWRAP_JOURNAL="$D/j/$v.jsonl" "$TIMEIT" -n 20 -warmup 2 -label "$v journal" -- "$D/lcwrap-$v" -- "$TRUE"
    done
  )
done
fw=$(echo "${walls[Go floor]}" | median)
fm=$(echo "${mins[Go floor]}" | minimum)
fc=$(echo "${cpus[Go floor]}" | median)
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg). Start-up wrapping \`$TRUE\`: $N runs a row in interleaved"
echo "rounds of 20, the median of the rounds' medians; ratios to the Go floor (\`bench/gofloor $TRUE\`); 0.05× the floor"
echo "is $(awk -v f="$fw" 'BEGIN { printf "%.3f", f * 0.05 }') ms of median wall here. The least wall time of all runs is the least"
echo "disturbed run: on a loaded machine it says more than the median; CPU is user+system of the whole tree."
echo
echo "| build | row | median wall (ms) | / Go floor | least wall (ms) | / Go floor | median CPU (ms) | CPU / Go floor | peak RSS (KiB, median) |"
echo "|---|---|---|---|---|---|---|---|---|"
for l in "${labels[@]}"; do
  w=$(echo "${walls[$l]}" | median); c=$(echo "${cpus[$l]}" | median); m=$(echo "${rss[$l]}" | median); n=$(echo "${mins[$l]}" | minimum)
  printf '| %s | %s | %.2f | %s× | %.2f | %s× | %.2f | %s× | %s |\n' "${l%% *}" "${l#* }" "$w" "$(ratio "$w" "$fw")" "$n" "$(ratio "$n" "$fm")" "$c" "$(ratio "$c" "$fc")" "$m"
done
echo
fi

# The emit loop: EMIT_CALLS calls from one sh loop, best of 3 (after a warm-up),
# every build and the floor in turn, three times over.
loop() { # bin journal
  LCWRAP_JOURNAL="$2" sh -c 'i=0; while [ $i -lt $EMIT_CALLS ]; do "$0" emit --child-id loop --kind heartbeat || exit 1; i=$((i+1)); done' "$1"
}
floorloop() { sh -c 'i=0; while [ $i -lt $EMIT_CALLS ]; do "$0" -append "$1" || exit 1; i=$((i+1)); done' "$FLOOR" "$D/j/floor-append.jsonl"; }
rate() { # cmd...: calls/s of one loop
  local t0 t1
  t0=$(date +%s%N); "$@"; t1=$(date +%s%N)
  awk -v n="$EMIT_CALLS" -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", n / (ns / 1e9) }'
}
if [[ " $SECTIONS " == *" emit "* ]]; then
declare -A best
floorloop
for v in "${variants[@]}"; do loop "$D/lcwrap-$v" "$D/j/emit-$v.jsonl"; done
for k in 1 2 3; do
  r=$(rate floorloop); [ "$r" -gt "${best[floor]:-0}" ] && best[floor]=$r
  for v in "${variants[@]}"; do
    r=$(rate loop "$D/lcwrap-$v" "$D/j/emit-$v.jsonl"); [ "$r" -gt "${best[$v]:-0}" ] && best[$v]=$r
  done
done
echo "The emit loop (\`lcwrap emit --child-id loop --kind heartbeat\` ×$EMIT_CALLS from one \`sh\` loop, best of 3, interleaved):"
echo
echo "| build | calls/s | / \`gofloor -append\` |"
echo "|---|---|---|"
echo "| Go floor (\`gofloor -append FILE\`) | ${best[floor]} | 1.00× |"
for v in "${variants[@]}"; do echo "| $v | ${best[$v]} | $(ratio "${best[$v]}" "${best[floor]}")× |"; done
echo
fi

# validate and status: the hand-written envelope decoder against
# encoding/json's, and both against jq.
if [[ " $SECTIONS " == *" throughput "* ]]; then
ef="$D/events.jsonl"
sf="$D/status.jsonl"
"$GENEVENTS" -n "$EV" >"$ef"
"$GENEVENTS" -journal -n "$EV" -children $((EV / 100)) >"$sf"
jqprog='reduce inputs as $e ({}; .[$e.childId] = ($e.state // .[$e.childId]))'
declare -A vw sw
for k in 1 2 3; do
  for v in "${variants[@]}"; do
    [ "$v" = cli ] && continue
    vw[$v]+="$("$TIMEIT" -n 1 -warmup 0 -label v -- "$D/lcwrap-$v" validate -q "$ef" | cut -f6) "
    sw[$v]+="$("$TIMEIT" -n 1 -warmup 0 -label s -- "$D/lcwrap-$v" status --all --json --journal "$sf" | cut -f6) "
  done
done
jv=$("$TIMEIT" -n 1 -warmup 0 -label jq -- sh -c "jq -c . '$ef' >/dev/null" | cut -f6)
js=$("$TIMEIT" -n 1 -warmup 0 -label jq -- jq -n "$jqprog" "$sf" | cut -f6)
echo "validate and status (CPU, median of 3 interleaved runs; jq once), $EV events ($(du -m "$ef" | cut -f1) MiB; the status journal of $((EV / 100)) children):"
echo
echo "| build | validate CPU (ms) | jq -c . / validate | status --all CPU (ms) | jq reduce / status |"
echo "|---|---|---|---|---|"
for v in "${variants[@]}"; do
  [ "$v" = cli ] && continue
  a=$(echo "${vw[$v]}" | median); b=$(echo "${sw[$v]}" | median)
  echo "| $v | $a | $(ratio "$jv" "$a")× | $b | $(ratio "$js" "$b")× |"
done
echo "| jq | $jv | | $js | |"
echo
fi
echo "Command: \`STARTUP_RUNS=$N EMIT_CALLS=$EMIT_CALLS TWINS_EVENTS=$EV bash bench/twins.sh\` ($(nproc) cores, $(go version | cut -d' ' -f3)); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
