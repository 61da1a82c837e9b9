#!/usr/bin/env bash
# make fleet-demo: three hosts on one machine, each with its own journal,
# host.name, agent Collector (agent.yaml) and, where the kernel allows, its
# own PID namespace, ship to one gateway Collector (gateway.yaml) on
# 127.0.0.1; lcwrap's fleet readers read the gateway's files back.
#
# Each host runs a workload (runs that succeed and fail, a long run that
# heartbeats, an adoption, hook emits, a build retried with --restart; one
# host seals journal files). While they run, the gateway is killed with
# SIGKILL for a few seconds and started again, and one host's agent is
# killed with SIGKILL and left down. Then it checks:
#   - every journal line of every host arrived exactly once after the
#     readers' dedup (raw duplicates are counted), byte for byte; for the
#     host whose agent is down, exactly the lines written before it died;
#   - `status --fleet --json` agrees with each host's own `status --json`
#     on every child (state, display, exit);
#   - the host whose agent is down reads "host silent since T", its running
#     child stale with that reason, not lost; the others are not silent;
#   - the gateway rotated its file and kept every rotated one.
#
# Exits non-zero on the first mismatch. KEEP=1 keeps the work directory.
set -euo pipefail

demo=fleet-demo
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/lcwrap-fleet-demo.XXXXXX")"
out="$work/fleet"
pids=()   # the Collectors
groups=() # the workloads: process groups (setsid), namespaces with them
cleanup() {
	for g in "${groups[@]}"; do
		kill -TERM -- "-$g" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for g in "${groups[@]}"; do
		wait "$g" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [ "${KEEP:-0}" = 1 ]; then
		say "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

hosts=(fleet-a fleet-b fleet-c)
machine_id="$(cat /etc/machine-id 2>/dev/null || true)"

# A free port on loopback (nothing answers on it).
port=""
for _ in $(seq 50); do
	p=$((20000 + RANDOM % 20000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		port=$p
		break
	fi
done
[ -n "$port" ] || fail "no free port on 127.0.0.1"

gw_pid=""
start_gateway() {
	LCWRAP_FLEET_DIR="$out" LCWRAP_GATEWAY_ADDR="127.0.0.1:$port" LCWRAP_FLEET_ROTATE_MB=1 \
		"$col" --config "$here/gateway.yaml" >>"$work/gateway.log" 2>&1 &
	gw_pid=$!
	pids+=("$gw_pid")
	for _ in $(seq 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
		kill -0 "$gw_pid" 2>/dev/null || { cat "$work/gateway.log" >&2; fail "the gateway exited"; }
		sleep 0.1
	done
	fail "the gateway does not listen on 127.0.0.1:$port"
}

declare -A agent_pid
start_agent() { # host
	local h=$1
	LCWRAP_JOURNAL="$work/$h/journal.jsonl" LCWRAP_OTEL_STATE="$work/$h/otel-state" LCWRAP_HOST_NAME="$h" \
		LCWRAP_HOST_ID="$machine_id" LCWRAP_GATEWAY="http://127.0.0.1:$port" \
		"$col" --config "$here/agent.yaml" --feature-gates=stanza.synchronousLogEmitter >>"$work/$h/agent.log" 2>&1 &
	agent_pid[$h]=$!
	pids+=("$!")
}

# Every host's journal lives in a 0700 directory, as lcwrap's own default
# does; the agents run as the journal's user (here, this user).
for h in "${hosts[@]}"; do
	mkdir -m 0700 -p "$work/$h"
done

say "gateway on 127.0.0.1:$port writing $out (rotating at 1 MB)"
start_gateway
for h in "${hosts[@]}"; do start_agent "$h"; done

# Own PID namespaces where the kernel allows (pids collide across hosts as
# they would on three machines); plain processes otherwise.
ns=()
if unshare -p -f --mount-proc --kill-child true 2>/dev/null; then
	ns=(unshare -p -f --mount-proc --kill-child)
	say "each host's workload runs in its own PID namespace"
else
	say "no PID namespaces here (unshare -p refused): the workloads share this one"
fi

# The workload of one host, run inside its namespace: it stays up (the
# namespace with it) as long as its long run does.
cat >"$work/workload.sh" <<'EOF'
set -u
h=$1 lcwrap=$2 J=$3 dir=$4
cd "$dir"
# Chatty runs: four with a heartbeat every 100 ms (lcwrap's floor) for
# 15 s (enough records for the gateway to rotate its 1 MB files while it
# is killed and restarted).
for c in 1 2 3 4; do
	"$lcwrap" --journal "$J" --child-id "chatty-$c" --heartbeat 100ms -- sleep 15 &
done
"$lcwrap" --journal "$J" --child-id run-ok -- true
"$lcwrap" --journal "$J" --child-id run-exit3 -- sh -c 'exit 3'
# A build that fails once, then passes: two attempts of one root.
"$lcwrap" --journal "$J" --child-id build --restart on-failure --max-attempts 3 --backoff 100ms -- \
	sh -c 'if [ -e built ]; then exit 0; fi; touch built; exit 1'
# An adopted process: lcwrap sees only its presence.
sleep 1 &
"$lcwrap" adopt --journal "$J" $!
wait
# Hook emits about a child lcwrap did not start.
for i in $(seq 20); do
	"$lcwrap" emit --journal "$J" --source demo-hooks --child-id "hook-$h" --external --kind activity --activity "step $i"
done
# The long run: heartbeats every second until the demo ends.
"$lcwrap" --journal "$J" --child-id long --heartbeat 1s -- sleep 100000 &
touch phase1.done
wait
EOF

for h in "${hosts[@]}"; do
	"$lcwrap" emit --journal "$work/$h/journal.jsonl" --source demo-hooks --child-id "hook-$h" --external --kind created --state created
	setsid "${ns[@]}" bash "$work/workload.sh" "$h" "$lcwrap" "$work/$h/journal.jsonl" "$work/$h" >"$work/$h/workload.log" 2>&1 &
	groups+=("$!")
done

wait_for() { # seconds, description, command...
	local secs=$1 what=$2
	shift 2
	local end=$(($(date +%s) + secs))
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for $what"
		sleep 0.2
	done
}
phase1_done() { for h in "${hosts[@]}"; do [ -e "$work/$h/phase1.done" ] || return 1; done; }
wait_for 120 "the workloads" phase1_done
say "workloads running: runs, a failing run, a retried build, an adoption, 20 hook emits, four chatty runs and a long run per host"

# Emits from this side, on one host with journal rotation (sealed files).
emits() { # host count label [extra flags]
	local h=$1 n=$2 label=$3
	shift 3
	for i in $(seq "$n"); do
		"$lcwrap" emit --journal "$work/$h/journal.jsonl" "$@" --source demo-hooks --child-id "hook-$h" --external --kind activity --activity "$label $i"
	done
}

say "killing the gateway (SIGKILL) for 3 s while the hosts write"
kill -KILL "$gw_pid"
wait "$gw_pid" 2>/dev/null || true
emits fleet-a 10 "during the outage" &
e1=$!
emits fleet-b 30 "during the outage" --journal-max-bytes 20000 &
e2=$!
emits fleet-c 10 "during the outage" &
e3=$!
sleep 3
start_gateway
wait $e1 $e2 $e3
say "gateway started again (pid $gw_pid)"

# A host's journal lines in journal order (sealed files first), and the
# host's records as the fleet readers show them (once each), both as jq -c
# writes them.
journal_lines() { "$lcwrap" tail --journal "$work/$1/journal.jsonl" | jq -c .; }
fleet_lines() { "$lcwrap" tail --fleet "$out" --host "$1" 2>/dev/null | jq -c .event; }
# shipped HOST prints N when the fleet holds exactly the host's first N
# journal lines, each once (its long run goes on appending heartbeats, so
# the journal's end is always a little ahead).
shipped() {
	local f j n
	f=$(fleet_lines "$1" | sort)
	n=$(grep -c . <<<"$f" || true)
	[ "$n" -gt 0 ] || return 1
	j=$(journal_lines "$1" | sed -n "1,${n}p" | sort) # sed reads it all: no SIGPIPE
	[ "$f" = "$j" ] && echo "$n"
}
declare -A want
all_shipped() {
	local n
	for h in "$@"; do
		n=$(shipped "$h") || return 1
		[ "$n" -ge "${want[$h]}" ] || return 1
	done
}
mark() { for h in "$@"; do want[$h]=$(journal_lines "$h" | wc -l); done; }

mark "${hosts[@]}"
wait_for 120 "every host's lines at the gateway" all_shipped "${hosts[@]}"
say "every line of every host arrived, once: fleet-a ${want[fleet-a]}, fleet-b ${want[fleet-b]}, fleet-c ${want[fleet-c]} lines"

say "killing fleet-c's agent (SIGKILL) and leaving it down"
kill -KILL "${agent_pid[fleet-c]}"
wait "${agent_pid[fleet-c]}" 2>/dev/null || true
killed_at=$(date +%s)
emits fleet-a 5 "after the kill"
emits fleet-b 5 "after the kill" --journal-max-bytes 20000
emits fleet-c 5 "never shipped"
mark fleet-a fleet-b
wait_for 60 "fleet-a and fleet-b at the gateway" all_shipped fleet-a fleet-b

# fleet-c: a prefix of its journal (what its agent sent before it died),
# nothing after.
nc=$(shipped fleet-c) || fail "fleet-c: the lines at the gateway are not the first lines of its journal, each once"
[ "$(journal_lines fleet-c | wc -l)" -gt "$nc" ] || fail "fleet-c wrote nothing after its agent died"
say "fleet-c: its first $nc journal lines arrived, the rest never will"

# Let fleet-c go silent (the check uses --silent-after 5s).
while [ $(($(date +%s) - killed_at)) -lt 7 ]; do sleep 0.5; done

"$lcwrap" status --fleet "$out" --all --json --silent-after 5s >"$work/fleet-status.json"
fs="$work/fleet-status.json"

for h in "${hosts[@]}"; do
	"$lcwrap" status --journal "$work/$h/journal.jsonl" --all --json >"$work/$h/status.json"
	own=$(jq -c '[.children[] | {childId, state, display, exit}] | sort_by(.childId)' "$work/$h/status.json")
	if [ "$h" = fleet-c ]; then
		# Its own journal went on after its agent died; compare with the
		# picture of the lines shipped before that.
		own=$(journal_lines fleet-c | sed -n "1,${nc}p" | "$lcwrap" status --file - --all --json |
			jq -c '[.children[] | {childId, state, display, exit}] | sort_by(.childId)')
	fi
	seen=$(jq -c --arg h "$h" '[.children[] | select(.host == $h) | {childId, state, display, exit}] | sort_by(.childId)' "$fs")
	[ "$own" = "$seen" ] || {
		printf 'own:   %s\nfleet: %s\n' "$own" "$seen" >&2
		fail "$h: status --fleet --json disagrees with the host's own status --json"
	}
	n=$(jq 'length' <<<"$own")
	[ "$n" -ge 7 ] || fail "$h: only $n children"
done
say "status --fleet --json agrees with each host's own status --json (state, display, exit of every child)"

jq -e '[.hosts[] | select(.host == "fleet-c")][0] | .silent and (.silentSince | length > 0)' "$fs" >/dev/null ||
	fail "fleet-c is not silent: $(jq -c '.hosts' "$fs")"
jq -e '[.hosts[] | select(.host != "fleet-c" and .silent)] | length == 0' "$fs" >/dev/null ||
	fail "a host with a running agent reads silent: $(jq -c '.hosts' "$fs")"
jq -e '[.children[] | select(.host == "fleet-c" and .childId == "long")][0] |
	.state == "running" and .stale and (.staleReason | startswith("host silent since"))' "$fs" >/dev/null ||
	fail "fleet-c's long run is not running and stale 'host silent since': $(jq -c '.children[] | select(.host == "fleet-c" and .childId == "long")' "$fs")"
jq -e '[.children[] | select(.host != "fleet-c" and .childId == "long")] | length == 2 and all(.state == "running" and (.stale | not))' "$fs" >/dev/null ||
	fail "the other hosts' long runs are not running and fresh"
# (The adopted processes read lost: their hosts recorded that, as lcwrap
# adopt does when an observed process ends; compared above.)
say "fleet-c reads: $(jq -r '.children[] | select(.host == "fleet-c" and .childId == "long") | "long: \(.state), stale: \(.staleReason)"' "$fs")"

files=$(find "$out" -type f | wc -l)
[ "$files" -ge 2 ] || fail "the gateway did not rotate (1 file)"
rotated=$(find "$out" -type f -name 'gateway-*' | wc -l)
dups=$(jq .duplicates "$fs")
damage=$(jq .damageCount "$fs")
records=$(jq .records "$fs")
say "gateway output: $files files ($rotated rotated, none deleted), $records records, $dups duplicates shown once, $damage damaged"

# A fleet cursor resumes where it was taken, across files: what follows
# record 100 is what a later `tail --after` of its cursor starts with.
"$lcwrap" tail --fleet "$out" >"$work/tail.all"
total=$(wc -l <"$work/tail.all")
cursor=$(sed -n '100p' "$work/tail.all" | jq -r .cursor)
"$lcwrap" tail --fleet "$out" --after "$cursor" >"$work/tail.after"
cmp -s <(tail -n +101 "$work/tail.all") <(head -n $((total - 100)) "$work/tail.after") ||
	fail "tail --fleet --after $cursor does not go on after record 100"
say "tail --fleet --after $cursor goes on after record 100 of $total"

"$lcwrap" snapshot --fleet "$out" 2>/dev/null | jq -e '.complete == false and (.coverage.hosts | length == 3)' >/dev/null ||
	fail "snapshot --fleet is not an incomplete snapshot covering 3 hosts"
if "$lcwrap" cancel --fleet "$out" long 2>"$work/cancel.err"; then fail "cancel --fleet was not refused"; fi
say "cancel --fleet refused: $(sed 's/^lcwrap: //' "$work/cancel.err")"

# Latency with these configs: 40 events appended on fleet-a 100 ms apart,
# each from its observedAt (written, host clock) to the gateway's receive
# stamp (the same clock here: one machine).
"$lcwrap" emit --journal "$work/fleet-a/journal.jsonl" --source demo-latency --child-id latency --external --kind created --state created
for i in $(seq 40); do
	"$lcwrap" emit --journal "$work/fleet-a/journal.jsonl" --source demo-latency --child-id latency --external --kind activity --activity "probe $i"
	sleep 0.1
done
mark fleet-a
wait_for 60 "the latency probes at the gateway" all_shipped fleet-a
cat "$out"/* | jq -R -r 'fromjson? | .resourceLogs[].scopeLogs[].logRecords[]
	| select(.body.stringValue | contains("\"source\":\"demo-latency\""))
	| ((.attributes[] | select(.key == "lcwrap.gateway.received_time_unix_nano") | .value.intValue | tonumber / 1e6)
	   - (.body.stringValue | fromjson | .observedAt | (.[0:19] + "Z" | fromdate) * 1000 + (.[20:23] | tonumber)))' |
	sort -n >"$work/latency.ms"
n=$(wc -l <"$work/latency.ms")
[ "$n" -ge 41 ] || fail "latency: $n probes found at the gateway, want 41"
median=$(sed -n "$(((n + 1) / 2))p" "$work/latency.ms")
p90=$(sed -n "$(((n * 9 + 9) / 10))p" "$work/latency.ms")
say "latency, append on a host to the gateway's file: median $(printf '%.0f' "$median") ms, p90 $(printf '%.0f' "$p90") ms, max $(printf '%.0f' "$(tail -n 1 "$work/latency.ms")") ms ($n events)"
t1=$(date +%s%N)
"$lcwrap" status --fleet "$out" --json >/dev/null
say "one status --fleet read of the whole output: $((($(date +%s%N) - t1) / 1000000)) ms"

echo
"$lcwrap" status --fleet "$out" --silent-after 5s
echo
say "PASS: 3 hosts, $(($(date +%s) - start))s"
