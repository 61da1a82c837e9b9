#!/usr/bin/env bash
# bash examples/otel-collector/demo.sh: ship a journal that lcwrap writes through an OpenTelemetry
# Collector (built from the Go module proxy in ./collector, with only the
# components ./config.yaml uses), export it to a file, and check that every
# journal line arrived as one log record with the right attributes.
#
# Then append to the journal, restart the collector on the same offset
# storage, and check that it ships exactly the new lines: an append-only
# journal plus the shipper's stored offset is all the checkpointing needed.
#
# Last, with the collector running (following the journal by offset): a torn
# line healed by the next writer, a malformed line quarantined by `lcwrap
# journal repair`, and size-based rotation into sealed files. Every line of
# every file must arrive exactly once, byte for byte (the quarantined ones as
# unparsed records): nothing is moved under the shipper.
#
# Exits non-zero on any mismatch. KEEP=1 keeps the work directory.
set -euo pipefail

demo=otel-demo
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/lcwrap-otel-demo.XXXXXX")"
colpid=""
cleanup() {
	if [ -n "$colpid" ] && kill -0 "$colpid" 2>/dev/null; then
		kill -TERM "$colpid" 2>/dev/null || true
		wait "$colpid" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		say "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

J="$work/journal.jsonl"
host="$(hostname 2>/dev/null || echo demo-host)"

lines() { if [ -f "$J" ]; then wc -l <"$J" | tr -d ' '; else echo 0; fi; }
# The child id of the last line of the journal: the run that just ended.
last_child() { tail -n 1 "$J" | jq -r .childId; }

# 3. Real events, written by lcwrap.
say "writing the journal with lcwrap: $J"
set +e
"$lcwrap" --journal "$J" --child-id demo-exit3 -- sh -c 'exit 3'
rc=$?
set -e
[ "$rc" = 3 ] || fail "lcwrap -- sh -c 'exit 3' exited $rc, want 3 (the child's code)"

"$lcwrap" --journal "$J" --child-id demo-true -- true || fail "lcwrap -- true exited $?, want 0"

# A child that lives long enough for a few heartbeats (liveness only).
"$lcwrap" --journal "$J" --child-id demo-heartbeat --heartbeat 200ms -- sleep 0.5 ||
	fail "lcwrap -- sleep 0.5 exited $?, want 0"

# An adopted process: lcwrap sees only its presence.
sleep 1 &
adopted_pid=$!
"$lcwrap" adopt --journal "$J" "$adopted_pid" || fail "lcwrap adopt exited $?, want 0"
wait "$adopted_pid" 2>/dev/null || true
adopted_child=$(last_child)

# Events from a stateless producer (a hook script) about a child lcwrap did
# not start: whatever the hook can see, under its own source name.
hook() { "$lcwrap" emit --journal "$J" --source demo-hooks --child-id demo-subagent --external "$@"; }
hook --kind created --state created || fail "lcwrap emit exited $?, want 0"
hook --kind activity --activity "reading the test log" || fail "lcwrap emit exited $?, want 0"

"$lcwrap" validate "$J" >/dev/null || fail "lcwrap validate rejects the journal"
first=$(lines)
say "journal: $first lines (launched: demo-exit3, demo-true, demo-heartbeat; adopted: $adopted_child, pid $adopted_pid; emitted: demo-subagent)"

# count_records FILE: log records in an export file so far (0 while the file
# is missing or its last line is still being written).
count_records() {
	[ -s "$1" ] || { echo 0; return; }
	jq -n '[inputs | .resourceLogs[]?.scopeLogs[]?.logRecords[]?] | length' "$1" 2>/dev/null || echo 0
}

# ship OUT WANT: run the collector until OUT holds WANT records (deadline
# 60s), then stop it gracefully.
ship() {
	local out="$1" want="$2" log="$1.log" deadline n
	LCWRAP_JOURNAL="$J" LCWRAP_OTEL_STATE="$work/state" LCWRAP_OTEL_OUT="$out" \
		LCWRAP_HOST_NAME="$host" "$col" --config "$here/config.yaml" >"$log" 2>&1 &
	colpid=$!
	deadline=$(($(date +%s) + 60))
	while :; do
		n=$(count_records "$out")
		[ "$n" -ge "$want" ] && break
		if ! kill -0 "$colpid" 2>/dev/null; then
			sed 's/^/  collector: /' "$log" >&2
			fail "the collector exited before exporting $want records ($n so far)"
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			sed 's/^/  collector: /' "$log" >&2
			fail "after 60s $out holds $n of $want records"
		fi
		sleep 0.1
	done
	kill -TERM "$colpid"
	wait "$colpid" || fail "the collector exited $? on SIGTERM"
	colpid=""
}

# flatten FILE: one JSON object per exported record, attribute values
# unwrapped from OTLP/JSON and their OTLP types kept beside them.
flatten() {
	jq -c '
	  def val: if has("stringValue") then .stringValue
	           elif has("intValue") then (.intValue | tonumber)
	           elif has("boolValue") then .boolValue
	           elif has("doubleValue") then .doubleValue
	           else . end;
	  def amap: (. // []) | map({key, value: (.value | val)}) | from_entries;
	  def tmap: (. // []) | map({key, value: (.value | keys[0])}) | from_entries;
	  .resourceLogs[] | (.resource.attributes | amap) as $res
	  | .scopeLogs[].logRecords[]
	  | {res: $res, time: .timeUnixNano, sev: .severityText, body: .body.stringValue,
	     a: (.attributes | amap), types: (.attributes | tmap)}' "$1"
}

# check RECORDS FROM TO: every journal line FROM..TO is exactly one record
# that carries the line as its body and the mapped fields; prints problems.
check() {
	jq -rn --rawfile raw "$J" --slurpfile recs "$1" --argjson from "$2" --argjson to "$3" --arg host "$host" '
	  def ns: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$")
	          | ((.s + "Z" | fromdateiso8601 | tostring) + (((.f // "") + "000000000")[0:9]));
	  def want_sev: if .kind == "terminal" and (.state == "failed" or .state == "lost") then "WARN"
	                elif .kind == "heartbeat" then "DEBUG" else "INFO" end;
	  ($raw | split("\n") | map(select(length > 0))) as $lines
	  | ([$recs[] | .a["lcwrap.journal_sequence"]] | map(select(. < $from or . > $to))) as $extra
	  | (if ($recs | length) != ($to - $from + 1)
	     then "\($recs | length) records for \($to - $from + 1) journal lines" else empty end),
	    (if ($extra | length) > 0 then "records for lines outside \($from)..\($to): \($extra)" else empty end),
	    (range($from; $to + 1) as $n
	     | $lines[$n - 1] as $line | ($line | fromjson) as $ev
	     | [$recs[] | select(.a["lcwrap.journal_sequence"] == $n)] as $m
	     | if ($m | length) != 1 then "line \($n): \($m | length) records"
	       else $m[0] as $r
	       | [ (if $r.body != $line then "body is not the journal line" else empty end),
	           (if $r.res["host.name"] != $host then "host.name \($r.res["host.name"])" else empty end),
	           (if $r.time != ($ev.observedAt | ns) then "timestamp \($r.time) != observedAt \($ev.observedAt)" else empty end),
	           (if $r.sev != ($ev | want_sev) then "severity \($r.sev), want \($ev | want_sev)" else empty end),
	           ( [["lcwrap.child_id", $ev.childId], ["lcwrap.kind", $ev.kind], ["lcwrap.state", $ev.state],
	              ["lcwrap.source", $ev.source], ["lcwrap.source_epoch", $ev.sourceEpoch],
	              ["lcwrap.sequence", $ev.sequence], ["lcwrap.journal_sequence", $ev.journalSequence],
	              ["lcwrap.event_id", $ev.eventId], ["lcwrap.root_child_id", $ev.lineage.rootChildId],
	              ["lcwrap.parent_child_id", $ev.lineage.parentChildId], ["lcwrap.external", $ev.lineage.external],
	              ["process.pid", ($ev.details.child.pid // $ev.details.pid)],
	              ["process.exit.code", (if $ev.kind == "terminal" then $ev.details.exit.code else null end)]][]
	             | select($r.a[.[0]] != .[1])
	             | "\(.[0]) = \($r.a[.[0]] | tojson), want \(.[1] | tojson)"),
	           ( ["lcwrap.sequence", "lcwrap.journal_sequence", "process.pid", "process.exit.code"][]
	             | select($r.types[.] != null and $r.types[.] != "intValue")
	             | "\(.) is \($r.types[.]), want intValue")
	         ] | map("line \($n): " + .)[]
	       end)'
}

# rec RECORDS CHILD KIND: the (last) record of CHILD with KIND, flattened.
rec() { jq -c --arg c "$2" --arg k "$3" 'select(.a["lcwrap.child_id"] == $c and .a["lcwrap.kind"] == $k)' "$1" | tail -n 1; }
expect() { # expect DESCRIPTION JSON JQ-CONDITION
	[ -n "$2" ] || fail "$1: no such record"
	jq -e "$3" >/dev/null <<<"$2" || fail "$1: got $2"
}

summary() {
	printf '  %-4s %-22s %-13s %-9s %-4s %-7s %-5s %s\n' LINE CHILD KIND STATE SEQ PID EXIT SEVERITY
	jq -rs 'sort_by(.a["lcwrap.journal_sequence"])[]
	  | [.a["lcwrap.journal_sequence"], .a["lcwrap.child_id"], .a["lcwrap.kind"], (.a["lcwrap.state"] // "-"),
	     .a["lcwrap.sequence"], (.a["process.pid"] // "-"), (.a["process.exit.code"] // "-"), .sev]
	  | map(tostring) | @tsv' "$1" |
		while IFS=$'\t' read -r n c k s q p e v; do
			printf '  %-4s %-22s %-13s %-9s %-4s %-7s %-5s %s\n' "$n" "$c" "$k" "$s" "$q" "$p" "$e" "$v"
		done
}

# 4. Ship it.
say "running the collector until the export holds $first records"
ship "$work/records-1.json" "$first"
flatten "$work/records-1.json" >"$work/flat-1.jsonl"
problems=$(check "$work/flat-1.jsonl" 1 "$first")
[ -z "$problems" ] || fail "$(printf 'exported records do not match the journal:\n%s' "$problems")"

# The facts the demo is about, spelled out.
r=$(rec "$work/flat-1.jsonl" demo-exit3 terminal)
expect "demo-exit3's terminal record" "$r" '.a["lcwrap.state"] == "failed" and .a["process.exit.code"] == 3 and .sev == "WARN"'
r=$(rec "$work/flat-1.jsonl" demo-true terminal)
expect "demo-true's terminal record" "$r" '.a["lcwrap.state"] == "completed" and .a["process.exit.code"] == 0 and .sev == "INFO"'
for c in demo-exit3 demo-true demo-heartbeat; do
	r=$(rec "$work/flat-1.jsonl" "$c" state_changed)
	expect "$c's running record" "$r" '.a["lcwrap.state"] == "running" and (.a["process.pid"] | type) == "number" and .a["process.pid"] > 0'
done
r=$(rec "$work/flat-1.jsonl" demo-heartbeat heartbeat)
expect "demo-heartbeat's heartbeat record" "$r" '.sev == "DEBUG" and (.a | has("lcwrap.state") | not)'
r=$(rec "$work/flat-1.jsonl" "$adopted_child" created)
expect "adopted process's created record" "$r" ".a[\"process.pid\"] == $adopted_pid and .a[\"lcwrap.external\"] == true"
r=$(rec "$work/flat-1.jsonl" "$adopted_child" terminal)
expect "adopted process's terminal record" "$r" '.a["lcwrap.state"] == "lost" and (.a | has("process.exit.code") | not) and .sev == "WARN"'
r=$(rec "$work/flat-1.jsonl" demo-subagent activity)
expect "demo-subagent's activity record" "$r" '.a["lcwrap.source"] == "demo-hooks" and .a["lcwrap.external"] == true and .sev == "INFO"'

say "exported $first records, every one matching its journal line:"
summary "$work/flat-1.jsonl"

# 5. Resume: append (an lcwrap inside an lcwrap: the inner child records its
#    parent), restart on the same offsets, expect only the new lines.
"$lcwrap" --journal "$J" --child-id demo-outer -- "$lcwrap" --child-id demo-inner -- true ||
	fail "nested lcwrap exited $?, want 0"
second=$(lines)
say "appended $((second - first)) lines; restarting the collector on its stored offsets"
ship "$work/records-2.json" "$((second - first))"
flatten "$work/records-2.json" >"$work/flat-2.jsonl"
problems=$(check "$work/flat-2.jsonl" "$((first + 1))" "$second")
[ -z "$problems" ] || fail "$(printf 'after the restart:\n%s' "$problems")"
r=$(rec "$work/flat-2.jsonl" demo-inner terminal)
expect "demo-inner's terminal record" "$r" '.a["lcwrap.parent_child_id"] == "demo-outer" and .a["lcwrap.root_child_id"] == "demo-outer"'
say "after the restart it exported exactly lines $((first + 1))..$second, nothing twice:"
summary "$work/flat-2.jsonl"

# 6. Repair and rotation under a running collector.
all_lines() { # every line of the journal, sealed files first, in order
	ls "$J".sealed-* 2>/dev/null | sort | while read -r f; do cat "$f"; done
	cat "$J"
}
total() { all_lines | wc -l | tr -d ' '; }
out3="$work/records-3.json"
LCWRAP_JOURNAL="$J" LCWRAP_OTEL_STATE="$work/state" LCWRAP_OTEL_OUT="$out3" \
	LCWRAP_HOST_NAME="$host" "$col" --config "$here/config.yaml" >"$out3.log" 2>&1 &
colpid=$!
sleep 1
printf '{"schemaVersion":1,"eventId":"torn-by-a-kil' >>"$J" # a writer killed inside write(2)
sleep 0.5
hook --kind activity --activity "after a torn line" || fail "lcwrap emit after a torn line exited $?, want 0 (the tail is healed)"
printf 'not an event\n' >>"$J"
if hook --kind activity --activity "blocked" 2>/dev/null; then fail "lcwrap emit after a malformed line exited 0"; fi
"$lcwrap" journal repair --journal "$J" >/dev/null || fail "lcwrap journal repair exited $?"
hook --kind activity --activity "after the repair" || fail "lcwrap emit after the repair exited $?"
for i in 1 2 3 4 5 6; do
	"$lcwrap" emit --journal "$J" --journal-max-bytes 3000 --source demo-hooks --child-id demo-rotated --external \
		--kind activity --activity "rotating $i" || fail "lcwrap emit --journal-max-bytes exited $?"
done
sealed=$(ls "$J".sealed-* 2>/dev/null | wc -l | tr -d ' ')
[ "$sealed" -ge 2 ] || fail "rotation sealed $sealed files, want at least 2"
"$lcwrap" journal verify --journal "$J" >/dev/null || fail "lcwrap journal verify after repair and rotation"
third=$(total)
want=$((third - second))
deadline=$(($(date +%s) + 60))
while [ "$(count_records "$out3")" -lt "$want" ]; do
	kill -0 "$colpid" 2>/dev/null || { sed 's/^/  collector: /' "$out3.log" >&2; fail "the collector exited"; }
	[ "$(date +%s)" -lt "$deadline" ] || { sed 's/^/  collector: /' "$out3.log" >&2; fail "after 60s $out3 holds $(count_records "$out3") of $want records"; }
	sleep 0.1
done
sleep 1 # anything extra (a line twice, a cut line) would arrive now
kill -TERM "$colpid"
wait "$colpid" || fail "the collector exited $? on SIGTERM"
colpid=""
flatten "$out3" >"$work/flat-3.jsonl"
all_lines >"$work/all.jsonl"
problems=$(jq -rn --rawfile raw "$work/all.jsonl" --slurpfile recs "$work/flat-3.jsonl" --argjson from "$((second + 1))" --argjson to "$third" '
  ($raw | split("\n") | map(select(length > 0))) as $lines
  | (if ($recs | length) != ($to - $from + 1) then "\($recs | length) records for \($to - $from + 1) lines" else empty end),
    (range($from; $to + 1) as $n | $lines[$n - 1] as $line
     | [$recs[] | select(.body == $line)] as $m
     | if ($m | length) != 1 then "line \($n) arrived \($m | length) times: \($line[0:60])"
       elif ($line | (try fromjson catch null) | .journalSequence? // null) != null
            and $m[0].a["lcwrap.journal_sequence"] != $n then "line \($n): journal_sequence \($m[0].a["lcwrap.journal_sequence"])"
       else empty end)')
[ -z "$problems" ] || fail "$(printf 'repair and rotation under the shipper:\n%s' "$problems")"
unparsed=$(jq -s '[.[] | select(.a["lcwrap.unparsed"] == true)] | length' "$work/flat-3.jsonl")
quarantines=$(jq -s '[.[] | select(.a["lcwrap.child_id"] == "lcwrap-journal" and (.body | fromjson | .details.journal.quarantined != null))] | length' "$work/flat-3.jsonl")
[ "$unparsed" = 2 ] && [ "$quarantines" = 2 ] || fail "want 2 unparsed lines and 2 quarantine records, got $unparsed and $quarantines"
say "repair and rotation under the running collector: lines $((second + 1))..$third (2 quarantined in place, $sealed files sealed) each shipped once, byte for byte"

say "PASS: $third journal lines shipped, attributes checked ($(($(date +%s) - start))s)"
