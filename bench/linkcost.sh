#!/usr/bin/env bash
# Issue 20's decisions, measured side by side in one run: what linking a
# package costs every `lcwrap -- CMD` (the hook server: hand-written or
# net/http; a second binary for heavy code paths: net/http, an OTLP-JSON
# reader), and one hook request against each hook server.
#
#  1. start-up wall time wrapping /bin/true, interleaved rounds of 20 runs
#     (bench/startup.sh's method): the Go floor alone, with
#     internal/hookhttp linked, with net/http's server linked; lcwrap
#     --no-journal as built, with net/http linked, with an OTLP-JSON
#     reader linked (protojson + go.opentelemetry.io/proto/otlp/logs/v1).
#     Nothing linked is started: each variant adds a file (bench/linkcost/
#     *.go.txt, through go build -overlay) that starts it only under an
#     environment variable no run sets.
#  2. package init time (GODEBUG=inittrace=1): the sum of every package's
#     init clock, median of INIT_RUNS runs, per binary.
#  3. one hook request (bench/hookserver): median and p99 per server.
#
# Not in make bench's default sections (it takes minutes): run it alone,
# or as BENCH_SECTIONS=linkcost make bench.
#
# The OTLP variant needs go.opentelemetry.io/proto/otlp in the module
# cache (a scratch go.mod under $BENCH_TMP; the repository's go.mod is
# not touched): without network and cache its rows are left out.
set -euo pipefail
source bench/lib.sh
N=${STARTUP_RUNS:-300}
INIT_RUNS=${INIT_RUNS:-21}
HOOK_REQUESTS=${HOOK_REQUESTS:-3000}
TRUE=$(type -P true)
D="$BENCH_TMP/linkcost"
rm -rf "$D" && mkdir -p "$D"

build_floor() { # tag out
  CGO_ENABLED=0 go build -trimpath -tags "$1" -o "$2" ./bench/gofloor
}
build_lcwrap() { # variant out [go flags...]
  local v=$1 out=$2
  shift 2
  printf '{"Replace":{"%s/cmd/lcwrap/zz_linkcost.go":"%s/bench/linkcost/%s.go.txt"}}\n' "$PWD" "$PWD" "$v" >"$D/overlay-$v.json"
  CGO_ENABLED=0 go build "$@" -overlay "$D/overlay-$v.json" -trimpath -tags urfave_cli_no_template -o "$out" ./cmd/lcwrap
}
build_floor "" "$D/floor"
build_floor hookhttp "$D/floor-hookhttp"
build_floor nethttp "$D/floor-nethttp"
build_lcwrap none "$D/lcwrap"
build_lcwrap nethttp "$D/lcwrap-nethttp"
OTLP=""
cp go.mod "$D/otlp.mod" && cp go.sum "$D/otlp.sum"
if GOFLAGS=-mod=mod go get -modfile="$D/otlp.mod" go.opentelemetry.io/proto/otlp@v1.11.1 >"$D/otlp-get.log" 2>&1 &&
  GOFLAGS=-mod=mod GOSUMDB=off build_lcwrap otlp "$D/lcwrap-otlp" -modfile="$D/otlp.mod" >>"$D/otlp-get.log" 2>&1; then
  OTLP="$D/lcwrap-otlp"
else
  echo "linkcost: no OTLP variant (see $D/otlp-get.log)" >&2
fi

labels=("Go floor (bench/gofloor)" "Go floor + internal/hookhttp" "Go floor + net/http server"
  "lcwrap --no-journal" "lcwrap --no-journal, net/http server linked")
bins=("$D/floor" "$D/floor-hookhttp" "$D/floor-nethttp" "$D/lcwrap" "$D/lcwrap-nethttp")
if [ -n "$OTLP" ]; then
  labels+=("lcwrap --no-journal, OTLP-JSON reader linked")
  bins+=("$OTLP")
fi
# argv INDEX: the command line of row INDEX (lcwrap's rows take
# --no-journal --).
argv() {
  case $(basename "${bins[$1]}") in
  lcwrap*) echo "${bins[$1]} --no-journal -- $TRUE" ;;
  *) echo "${bins[$1]} $TRUE" ;;
  esac
}
row() { # index
  # shellcheck disable=SC2046
  "$TIMEIT" -n 20 -warmup 2 -label "${labels[$1]}" -- $(argv "$1")
}
declare -A walls mins cpus rss
# Every row must run its command to a clean end first.
for i in "${!bins[@]}"; do
  # shellcheck disable=SC2046
  $(argv "$i") || { echo "linkcost: $(argv "$i") failed" >&2; exit 1; }
done
for ((r = 0; r < N / 20; r++)); do
  while IFS=$'\t' read -r label runs med min max cpu peak; do
    walls[$label]+="$med "; mins[$label]+="$min "; cpus[$label]+="$cpu "; rss[$label]=$peak
  done < <(for i in "${!bins[@]}"; do row "$i"; done)
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { tr ' ' '\n' | grep . | sort -g | head -1; }
# init_ms BIN ARGS...: the median over INIT_RUNS runs of the sum of every
# package's init clock (ms), GODEBUG=inittrace=1.
init_ms() {
  local k
  for ((k = 0; k < INIT_RUNS; k++)); do
    { GODEBUG=inittrace=1 "$@" 2>&1 >/dev/null || true; } | awk '$1 == "init" { for (i = 1; i <= NF; i++) if ($(i+1) == "ms" && $(i+2) == "clock,") s += $i } END { printf "%.3f\n", s }'
  done | median
}
floor_wall=$(echo "${walls[${labels[0]}]}" | median)
echo "## What linking a package costs a run"
echo
echo "Whole-process wall time wrapping \`$TRUE\`: $N runs each, in interleaved rounds of 20; the"
echo "median of the rounds' medians; the cost is the difference to the row it adds to, and its"
echo "ratio to the Go floor. Init: the sum of every package's init clock (\`GODEBUG=inittrace=1\`),"
echo "median of $INIT_RUNS runs. The minimum wall time (of all $N runs) is the least disturbed run: on a"
echo "loaded machine it says more than the median."
echo
echo "| binary | median wall (ms) | ratio to the Go floor | added wall (ms) | added / Go floor | min wall (ms) | added min (ms) | median CPU (ms) | added CPU (ms) | init (ms) | size (KiB) | peak RSS (KiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
base="" cbase="" mbase=""
for i in "${!labels[@]}"; do
  l=${labels[$i]}
  w=$(echo "${walls[$l]}" | median)
  c=$(echo "${cpus[$l]}" | median)
  m=$(echo "${mins[$l]}" | minimum)
  case $i in 0 | 3) base=$w; cbase=$c; mbase=$m ;; esac
  # shellcheck disable=SC2046
  im=$(init_ms $(argv "$i"))
  add=$(awk -v a="$w" -v b="$base" 'BEGIN { printf "%.2f", a - b }')
  cadd=$(awk -v a="$c" -v b="$cbase" 'BEGIN { printf "%.2f", a - b }')
  madd=$(awk -v a="$m" -v b="$mbase" 'BEGIN { printf "%.2f", a - b }')
  printf '| %s | %.2f | %s× | %s | %s× | %.2f | %s | %.2f | %s | %s | %d | %s |\n' "$l" "$w" "$(ratio "$w" "$floor_wall")" "$add" "$(ratio "$add" "$floor_wall")" "$m" "$madd" "$c" "$cadd" "$im" $(($(stat -c %s "${bins[$i]}") / 1024)) "${rss[$l]}"
done
echo
echo "0.05× the Go floor (issue 21's margin for keeping a hand-written twin): $(awk -v f="$floor_wall" 'BEGIN { printf "%.3f", f * 0.05 }') ms."
echo
HOOKSERVER="$D/hookserver"
go build -o "$HOOKSERVER" ./bench/hookserver
echo "### One hook request"
echo
"$HOOKSERVER" -n "$HOOK_REQUESTS"
echo
echo "Command: \`STARTUP_RUNS=$N bash bench/linkcost.sh\` ($(nproc) cores, $(go version | cut -d' ' -f3))."
