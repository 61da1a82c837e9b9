#!/usr/bin/env bash
# Issue 4: the journal. Appends/s from one process and from 8 contending
# processes; a fresh process's open+append on a 1k- vs a 1M-line journal;
# against a baseline writer that re-reads and re-validates the whole file
# on every append (what the reference writer does); the lock directory
# protocol against flock(2) on the same file system.
set -euo pipefail
source bench/lib.sh
JB="$BENCH_TMP/journalbench"
go build -o "$JB" ./bench/journalbench
D="$BENCH_TMP/journal"
rm -rf "$D" && mkdir -p "$D"
n1=${JOURNAL_APPENDS:-20000}
big=${JOURNAL_BIG:-1000000}

# One process, one line per Append, no fsync.
one=$("$JB" append -journal "$D/one.jsonl" -n "$n1" | cut -f3)

# 8 processes x 1000 events, one Append per line and through the batching sink.
c_line=$("$JB" contend -journal "$D/contend-line.jsonl" -procs 8 -n 1000)
c_sink=$("$JB" contend -journal "$D/contend-sink.jsonl" -procs 8 -n 1000 -sink)

# Fresh processes: `lcwrap emit` (start, open, check, lock, append, close) on
# journals of 1k and 1M lines. The first run on a generated journal has no
# checkpoint and reads it all; the runs after it start from the checkpoint.
"$GENEVENTS" -journal -n 1000 > "$D/1k.jsonl"
"$GENEVENTS" -journal -n "$big" > "$D/1m.jsonl"
emit_args=(emit --child-id bench-fresh --kind heartbeat --sequence 1 --fsync never)
first_1m=$("$TIMEIT" -n 1 -warmup 0 -label first-1m -- "$LCWRAP" "${emit_args[@]}" --journal "$D/1m.jsonl" | cut -f3)
"$TIMEIT" -n 1 -warmup 0 -- "$LCWRAP" "${emit_args[@]}" --journal "$D/1k.jsonl" > /dev/null
runs=${JOURNAL_RUNS:-30}
f1k=$("$TIMEIT" -n "$runs" -label fresh-1k -- "$LCWRAP" "${emit_args[@]}" --journal "$D/1k.jsonl")
f1m=$("$TIMEIT" -n "$runs" -label fresh-1m -- "$LCWRAP" "${emit_args[@]}" --journal "$D/1m.jsonl")
# Sequence reservation: the child wrote last (cheap) vs a child id the journal
# has never seen (reads the whole journal backwards).
r_recent=$("$TIMEIT" -n "$runs" -label reserve-recent -- "$LCWRAP" emit --child-id bench-fresh --kind heartbeat --fsync never --journal "$D/1m.jsonl")
r_new=$("$TIMEIT" -n 3 -warmup 0 -label reserve-new -- sh -c "exec '$LCWRAP' emit --child-id new-\$\$ --kind heartbeat --fsync never --journal '$D/1m.jsonl'")

# Baseline vs lcwrap on a 10k-line journal.
"$GENEVENTS" -journal -n 10000 > "$D/base.jsonl"
cp "$D/base.jsonl" "$D/lc10k.jsonl"
base=$("$JB" baseline -journal "$D/base.jsonl" -n "${JOURNAL_BASELINE_APPENDS:-50}" | cut -f3)
lc10k=$("$JB" append -journal "$D/lc10k.jsonl" -n "$n1" | cut -f3)
"$LCWRAP" journal verify --journal "$D/lc10k.jsonl" > /dev/null
"$LCWRAP" journal verify --journal "$D/contend-line.jsonl" > /dev/null
"$LCWRAP" journal verify --journal "$D/contend-sink.jsonl" > /dev/null

locks=$(go test ./internal/journal -run '^$' -bench 'Lock' -benchtime 3000x 2>/dev/null | grep -E '^BenchmarkLock')
lock_ns() { echo "$locks" | awk -v m="$1" '$1 ~ m {print $3}'; }

w() { echo "$1" | cut -f3; }
echo "## Journal (issue 4)"
echo
echo "File system: $(df -T "$D" | awk 'NR==2 {print $2}'). Fsync off (\`--fsync never\`) so the numbers are the journal's, not the disk's."
echo
echo "| measurement | result | goal | command |"
echo "|---|---|---|---|"
printf '| appends/s, one process, one line per Append | %.0f | ≥ 10,000 | `journalbench append -n %d` |\n' "$one" "$n1"
echo "$c_line" | awk -F'\t' '{ printf "| 8 processes × 1000, one Append per line: lines/s total | %.0f (%d lines, %d lost, %d failed) | ≥ 10,000, 0 lost | `journalbench contend -procs 8 -n 1000` |\n", $5, $4, $6, $7 }'
echo "$c_sink" | awk -F'\t' '{ printf "| 8 processes × 1000 through emit.JournalSink (batched): lines/s total | %.0f (%d lines, %d lost, %d failed) | ≥ 10,000, 0 lost | `journalbench contend -procs 8 -n 1000 -sink` |\n", $5, $4, $6, $7 }'
printf '| fresh `lcwrap emit`, 1k-line journal: median wall ms | %s | | `lcwrap emit --sequence 1 ...` ×%d |\n' "$(w "$f1k")" "$runs"
printf '| fresh `lcwrap emit`, %d-line journal: median wall ms | %s | | same |\n' "$big" "$(w "$f1m")"
printf '| ratio big / 1k | **%s** | ≤ 1.2 | |\n' "$(ratio "$(w "$f1m")" "$(w "$f1k")")"
printf '| first `lcwrap emit` on the %d-line journal, no checkpoint yet (reads it all, once) | %s ms | | |\n' "$big" "$first_1m"
printf '| `lcwrap emit` reserving the next sequence, child wrote last, big journal | %s ms | | |\n' "$(w "$r_recent")"
printf '| `lcwrap emit` reserving the first sequence of a new child id, big journal (reads it backwards) | %s ms | | |\n' "$(w "$r_new")"
printf '| baseline (re-read + re-validate all under the lock), 10k lines: appends/s | %.1f | | `journalbench baseline -n 50` |\n' "$base"
printf '| lcwrap on the same 10k-line journal: appends/s | %.0f | | `journalbench append` |\n' "$lc10k"
printf '| ratio lcwrap / baseline | **%s×** | ≥ 100× | |\n' "$(ratio "$lc10k" "$base")"
printf '| lock acquire+release: lock directory (renameat2 of a prepared directory) | %s ns | | `go test ./internal/journal -bench Lock` |\n' "$(lock_ns dir-rename)"
printf '| lock acquire+release: lock directory (mkdir + owner.json, the portable fallback) | %s ns | | same |\n' "$(lock_ns dir-mkdir)"
printf '| lock acquire+release: flock(2) on a file in the same directory | %s ns | | same |\n' "$(lock_ns flock)"
