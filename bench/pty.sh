#!/usr/bin/env bash
# Issue 6: `lcwrap --pty` passing 100 MiB from a child's terminal to a pipe,
# against script(1) doing the same; goal: at least 1.0× script's throughput.
set -euo pipefail
source bench/lib.sh
ROUNDS=${PTY_ROUNDS:-7}
F="$BENCH_TMP/pty-100m.txt"
SIZE=$((100 << 20))
[ "$(stat -c %s "$F" 2>/dev/null || echo 0)" = "$SIZE" ] ||
  (set +o pipefail; head -c $((SIZE * 3 / 4 + 4096)) /dev/urandom | base64 -w 99 | head -c "$SIZE" > "$F")
cat "$F" > /dev/null
cmd_script="script -qfc \"cat '$F'\" /dev/null | cat > /dev/null"
cmd_lcwrap="'$LCWRAP' --no-journal --pty -- cat '$F' | cat > /dev/null"
declare -A walls cpus rss
for ((r = 0; r < ROUNDS; r++)); do
  while IFS=$'\t' read -r label runs med min max cpu peak; do
    walls[$label]+="$med "; cpus[$label]+="$cpu "; rss[$label]=$peak
  done < <(
    "$TIMEIT" -n 3 -warmup 0 -label script -- sh -c "$cmd_script"
    "$TIMEIT" -n 3 -warmup 0 -label lcwrap -- sh -c "$cmd_lcwrap"
  )
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
sw=$(echo "${walls[script]}" | median); lw=$(echo "${walls[lcwrap]}" | median)
echo "## PTY throughput (issue 6)"
echo
echo "100 MiB of 100-byte lines written by \`cat\` to its terminal, out to \`/dev/null\` through a pipe;"
echo "$ROUNDS interleaved rounds of 3 runs each, the median of the rounds' medians. Goal: lcwrap ≥ 1.0× script."
echo
echo "| command | median wall (ms) | MiB/s | median CPU (ms) | peak RSS (KiB) |"
echo "|---|---|---|---|---|"
declare -A shown=([script]='script -qfc "cat pty-100m.txt" /dev/null | cat > /dev/null'
  [lcwrap]="bin/lcwrap --no-journal --pty -- cat pty-100m.txt | cat > /dev/null")
for l in script lcwrap; do
  w=$(echo "${walls[$l]}" | median); c=$(echo "${cpus[$l]}" | median)
  printf '| `%s` | %.0f | %.0f | %.0f | %s |\n' "${shown[$l]//|/\\|}" "$w" "$(awk -v w="$w" 'BEGIN{print 100/(w/1000)}')" "$c" "${rss[$l]}"
done
echo
echo "Throughput ratio (lcwrap / script): **$(ratio "$sw" "$lw")×** (goal ≥ 1.0×). Both are bound by the"
echo "kernel's terminal processing (the child's output through n_tty, 4 KiB a read on the master)."
echo "script is $(script --version 2>/dev/null | sed 's/^script from //')."
