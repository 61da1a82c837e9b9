#!/usr/bin/env bash
# Records the fixtures of reader_collector_test.go with the real
# Collectors of examples/otel-collector (bin/lcwrap-otelcol, agent.yaml,
# gateway.yaml) and the lcwrap of this checkout. Run from the repository
# root after `make fleet-demo` has built bin/lcwrap-otelcol:
#
#   bash internal/fleet/testdata/collector/record.sh
#
# What the Collectors write is kept as it is (gateway output, one export
# request per line). Two hosts: rec-a and rec-b (rec-b's journal holds a
# line that is not an event: a torn line lcwrap quarantined in place); a
# third agent ships with an empty host.name. rec-a's agent is then
# restarted on a fresh offset store, so its whole journal arrives a second
# time (real duplicates, with new receive stamps).
#
# The rotated/ layout is then arranged from those bytes: the output split
# at a line boundary into a rotated file and a live one, as the exporter's
# rotation leaves them; live/ adds what a killed gateway leaves: a request
# cut in the middle with the next one appended to it (mid-file), and the
# first half of a request at the end of the live file (being written).
set -euo pipefail
root="$(pwd)"
here="$root/internal/fleet/testdata/collector"
col="$root/bin/lcwrap-otelcol"
lcwrap="$root/bin/lcwrap"
go build -o "$lcwrap" ./cmd/lcwrap
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$work"' EXIT
unset LCWRAP_CHILD_ID LCWRAP_ROOT_CHILD_ID LCWRAP_JOURNAL
port=$((20000 + RANDOM % 20000))
out="$work/out"

LCWRAP_FLEET_DIR="$out" LCWRAP_GATEWAY_ADDR="127.0.0.1:$port" "$col" --config examples/otel-collector/gateway.yaml >/dev/null 2>"$work/gw.log" &
gw=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

agent() { # name journal state: sets pid
	LCWRAP_JOURNAL="$2" LCWRAP_OTEL_STATE="$3" LCWRAP_HOST_NAME="$1" LCWRAP_HOST_ID=0123456789abcdef0123456789abcdef \
		LCWRAP_GATEWAY="http://127.0.0.1:$port" "$col" --config examples/otel-collector/agent.yaml \
		--feature-gates=stanza.synchronousLogEmitter >/dev/null 2>>"$work/agent.log" &
	pid=$!
}
records() { cat "$out"/* 2>/dev/null | jq -R 'fromjson? | [.resourceLogs[].scopeLogs[].logRecords[]] | length' | awk '{n+=$1} END {print n+0}'; }
wait_records() { for _ in $(seq 300); do [ "$(records)" -ge "$1" ] && return; sleep 0.1; done; echo "timed out at $(records) of $1" >&2; exit 1; }

mkdir -p "$work/a" "$work/b" "$work/c"
JA="$work/a/journal.jsonl" JB="$work/b/journal.jsonl" JC="$work/c/journal.jsonl"
"$lcwrap" --journal "$JA" --child-id build -- true
"$lcwrap" --journal "$JA" --child-id test -- sh -c 'exit 3' || true
"$lcwrap" --journal "$JB" --child-id build -- true # the same id on another host
"$lcwrap" emit --journal "$JB" --source hooks --child-id sub --external --kind created --state created
printf '{"schemaVersion":1,"eventId":"torn' >>"$JB" # a writer killed mid-line
"$lcwrap" emit --journal "$JB" --source hooks --child-id sub --external --kind activity --activity "after the torn line"
"$lcwrap" emit --journal "$JC" --source hooks --child-id nohost --external --kind created --state created
na=$(wc -l <"$JA") nb=$(wc -l <"$JB") nc=$(wc -l <"$JC")

agent rec-a "$JA" "$work/a/state"
pa=$pid
agent rec-b "$JB" "$work/b/state"
pb=$pid
agent "" "$JC" "$work/c/state"
pc=$pid
wait_records $((na + nb + nc))
kill -TERM "$pa" "$pc"
wait "$pa" "$pc" 2>/dev/null || true
"$lcwrap" --journal "$JB" --child-id late -- true # rec-b goes on
agent rec-a "$JA" "$work/a/state2" # a fresh offset store: all again
pa=$pid
wait_records $((2 * na + nb + nc + 4))
kill -TERM "$pa" "$pb"
wait "$pa" "$pb" 2>/dev/null || true
kill -TERM "$gw"
wait "$gw" 2>/dev/null || true

rm -rf "$here/recorded" "$here/rotated" "$here/live"
mkdir -p "$here/recorded" "$here/rotated" "$here/live"
cp "$out"/gateway.jsonl "$here/recorded/gateway.jsonl"
n=$(wc -l <"$here/recorded/gateway.jsonl")
head -n $((n / 2)) "$here/recorded/gateway.jsonl" >"$here/rotated/gateway-2026-11-30T14-00-00.000-size.jsonl"
tail -n +$((n / 2 + 1)) "$here/recorded/gateway.jsonl" >"$here/rotated/gateway.jsonl"
# live/: line 2 cut in the middle with line 3 appended to it, and the first
# half of the last line without its newline.
awk -v n="$n" 'NR == 2 { printf "%s", substr($0, 1, int(length($0) / 2)); next } NR == n { printf "%s", substr($0, 1, int(length($0) / 2)); next } { print }' \
	"$here/recorded/gateway.jsonl" >"$here/live/gateway.jsonl"
echo "recorded $n gateway lines, $(records) records"
