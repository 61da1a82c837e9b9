#!/usr/bin/env bash
# Issue 21's RSS row, taken apart: where the wrapper's resident pages come
# from. For each program, started as a wrapper of `sleep 1`, its mappings
# of its own file are read from /proc/PID/smaps half-way through: each
# mapping's size and how much of it is resident, and the process's whole
# RSS. The programs: the Go floor (bench/gofloor), the same floor with
# lcwrap's hook server linked and never started (-tags hookhttp), with
# net/http's server linked and never started (-tags nethttp), and
# bin/lcwrap --no-journal. What it shows: the resident pages follow the
# size of the program's file, not the code a run executes — the kernel
# maps the 64 KiB around each page a process touches (fault-around), and
# every linked package's initialiser runs, so code that is linked and
# never called is resident all the same.
#
# Not in make bench's default sections: run it alone (bash bench/rss.sh).
set -euo pipefail
source bench/lib.sh
D="$BENCH_TMP/rss"
rm -rf "$D" && mkdir -p "$D"
CGO_ENABLED=0 go build -trimpath -o "$D/gofloor" ./bench/gofloor
CGO_ENABLED=0 go build -trimpath -tags hookhttp -o "$D/gofloor-hookhttp" ./bench/gofloor
CGO_ENABLED=0 go build -trimpath -tags nethttp -o "$D/gofloor-nethttp" ./bench/gofloor
SLEEP=$(type -P sleep)
# resident BIN ARGS...: file size, then for the mappings of BIN's file
# (r-x code, r-- read-only data, rw- data) "size/resident" in KiB, then
# the whole RSS in KiB.
resident() {
  local bin=$1 pid
  shift
  "$bin" "$@" &
  pid=$!
  sleep 0.5
  awk -v f="$(readlink -f "$bin")" '
    /^[0-9a-f]+-[0-9a-f]+ / { cur = ($6 == f) ? $2 : "" }
    cur != "" && /^Size:/ { size[cur] = $2 }
    cur != "" && /^Rss:/ { rss[cur] = $2 }
    END { printf "%s/%s\t%s/%s\t%s/%s", size["r-xp"], rss["r-xp"], size["r--p"], rss["r--p"], size["rw-p"], rss["rw-p"] }
  ' "/proc/$pid/smaps"
  printf '\t%s\n' "$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")"
  wait "$pid"
}
echo "## Resident pages of a wrapper (issue 21)"
echo
echo "Each program wrapping \`$SLEEP 1\`, read half-way (\`/proc/PID/smaps\`: the mappings of its own file); KiB."
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); kernel $(uname -r)."
echo
echo "| program | file size | code: mapped / resident | read-only data: mapped / resident | data: mapped / resident | whole RSS |"
echo "|---|---|---|---|---|---|"
row() { # label bin args...
  local label=$1 bin=$2 code ro rw all
  shift 2
  IFS=$'\t' read -r code ro rw all < <(resident "$bin" "$@")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$(( $(stat -c %s "$bin") / 1024 ))" "${code/\// / }" "${ro/\// / }" "${rw/\// / }" "$all"
}
row "Go floor" "$D/gofloor" "$SLEEP" 1
row "Go floor + lcwrap's hook server linked, never started" "$D/gofloor-hookhttp" "$SLEEP" 1
row "Go floor + net/http's server linked, never started" "$D/gofloor-nethttp" "$SLEEP" 1
row "lcwrap --no-journal" "$LCWRAP" --no-journal -- "$SLEEP" 1
echo
echo "Command: \`bash bench/rss.sh\` (bin/lcwrap is \`make build\`'s)."
