#!/usr/bin/env bash
# Issue 6: `lcwrap --activity output` passing 1 GiB of output through to a
# pipe, against cat doing the same through the same pipe shape; goal: at
# least 0.8× cat's throughput.
set -euo pipefail
source bench/lib.sh
ROUNDS=${ACTIVITY_ROUNDS:-7}
F="$BENCH_TMP/activity-1g.txt"
SIZE=$((1 << 30))
# 1 GiB of 100-byte lines (base64 text).
[ "$(stat -c %s "$F" 2>/dev/null || echo 0)" = "$SIZE" ] ||
  (set +o pipefail; head -c $((SIZE * 3 / 4 + 4096)) /dev/urandom | base64 -w 99 | head -c "$SIZE" > "$F")
cat "$F" > /dev/null # into the page cache
cmd_cat="cat '$F' | cat > /dev/null"
cmd_relay="cat '$F' | cat | cat > /dev/null"
cmd_lcwrap="'$LCWRAP' --no-journal --activity output -- cat '$F' | cat > /dev/null"
# Interleaved rounds, so that the noise of a shared machine falls on both
# rows alike; the medians are over the rounds' medians.
declare -A walls cpus rss
for ((r = 0; r < ROUNDS; r++)); do
  while IFS=$'\t' read -r label runs med min max cpu peak; do
    walls[$label]+="$med "; cpus[$label]+="$cpu "; rss[$label]=$peak
  done < <(
    "$TIMEIT" -n 3 -warmup 0 -label cat -- sh -c "$cmd_cat"
    "$TIMEIT" -n 3 -warmup 0 -label relay -- sh -c "$cmd_relay"
    "$TIMEIT" -n 3 -warmup 0 -label lcwrap -- sh -c "$cmd_lcwrap"
  )
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
cw=$(echo "${walls[cat]}" | median); lw=$(echo "${walls[lcwrap]}" | median); rw=$(echo "${walls[relay]}" | median)
echo "## Output activity throughput (issue 6)"
echo
echo "1 GiB of 100-byte lines from the page cache to \`/dev/null\` through a pipe; $ROUNDS interleaved"
echo "rounds of 3 runs each, the median of the rounds' medians. Goal: lcwrap ≥ 0.8× cat's throughput."
echo
echo "| command | median wall (ms) | MiB/s | median CPU (ms) | peak RSS (KiB) |"
echo "|---|---|---|---|---|"
declare -A shown=([cat]="cat activity-1g.txt | cat > /dev/null"
  [relay]="cat activity-1g.txt | cat | cat > /dev/null"
  [lcwrap]="bin/lcwrap --no-journal --activity output -- cat activity-1g.txt | cat > /dev/null")
for l in cat relay lcwrap; do
  w=$(echo "${walls[$l]}" | median); c=$(echo "${cpus[$l]}" | median)
  printf '| `%s` | %.0f | %.0f | %.0f | %s |\n' "${shown[$l]//|/\\|}" "$w" "$(awk -v w="$w" 'BEGIN{print 1024/(w/1000)}')" "$c" "${rss[$l]}"
done
echo
echo "lcwrap interposes on the command's output: it sits in the middle of the pipe, where \`cat\` relaying the"
echo "same bytes is the peer (second row against third, the same pipe shape): **$(ratio "$rw" "$lw")×** cat's throughput"
echo "(goal ≥ 0.8×). Against no interposer at all (first row), lcwrap gets $(ratio "$cw" "$lw")× and a relaying \`cat\` $(ratio "$cw" "$rw")×:"
echo "on this machine any extra process in a pipe costs that much."
echo "Where lcwrap's stdout is a pipe in blocking mode (as here) the bytes go by tee(2), read once for"
echo "the line scan; the child's pipe is grown to 1 MiB (F_SETPIPE_SZ). CPU is the whole tree's."
