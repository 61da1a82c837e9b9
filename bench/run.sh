#!/usr/bin/env bash
# make bench: every benchmark side by side with its peer, in one run.
# Each section script prints a markdown fragment; this script gathers them
# into bench/RESULTS.md with a machine line and peer versions.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
source bench/lib.sh
ensure_peers
mkdir -p bench/out
sections=(${BENCH_SECTIONS:-validate adopt journal chaos startup idle status activity pty hook view wait serve})
{
  echo "# lcwrap benchmark results"
  echo
  echo "Produced by \`make bench\` on $(date -u +%Y-%m-%dT%H:%M:%SZ). Shared, noisy machines:"
  echo "read the ratios, not the absolute times. Each row names the command that reproduces it."
  echo
  machine_line
  echo
  for s in "${sections[@]}"; do
    bash "bench/$s.sh"
    echo
  done
} | tee bench/RESULTS.md.tmp
mv bench/RESULTS.md.tmp bench/RESULTS.md
echo "wrote bench/RESULTS.md" >&2
