#!/bin/sh
# lcwrap-hook.sh: a Claude Code hook that records the session and its
# sub-agents as lifecycle events with `lcwrap emit`, so that sub-agents
# lcwrap did not launch still get honest rows in `lcwrap status`.
#
# Register it for SessionStart, SubagentStart, SubagentStop, Stop and
# SessionEnd (settings.json beside this file). Claude Code passes one JSON
# payload on stdin; this script reads session_id, hook_event_name,
# agent_id, agent_type, source, reason, stop_hook_active, cwd, model and
# the transcript paths, and nothing else: prompts and messages never leave
# the payload. What it records, and why a stopped sub-agent is `lost`, is
# in README.md.
#
# It never fails or slows the agent it observes: it prints nothing on
# stdout, always exits 0, waits at most 1s for the journal lock per event,
# and when jq or lcwrap is missing, the payload is malformed, or the
# journal refuses the event, it says so in one line on stderr and
# carries on.
#
# Environment: LCWRAP_JOURNAL (the journal, as for every lcwrap command),
# LCWRAP_BIN (lcwrap; default: lcwrap on PATH), LCWRAP_HOOK_JQ (jq),
# LCWRAP_HOOK_SOURCE (the events' source; default claude-code-hooks),
# LCWRAP_HOOK_STATE (where lifecycle numbers are kept; default
# <journal>.hooks).

LCWRAP=${LCWRAP_BIN:-lcwrap}
JQ=${LCWRAP_HOOK_JQ:-jq}
SOURCE=${LCWRAP_HOOK_SOURCE:-claude-code-hooks}

warn() { printf 'lcwrap-hook: %s\n' "$*" >&2; }

# Read the whole payload before anything can fail, so that Claude Code
# never writes into a closed pipe.
payload=$(cat) || payload=

command -v "$JQ" >/dev/null 2>&1 || { warn "jq not found; nothing recorded"; exit 0; }
command -v "$LCWRAP" >/dev/null 2>&1 || { warn "lcwrap not found; nothing recorded"; exit 0; }

# One jq call turns the payload into shell assignments (quoted by @sh) and
# `base`: the details every created, terminal and diagnostic event
# carries. Strings are cut to 500 characters; anything else is ignored.
vars=$(printf '%s' "$payload" | "$JQ" -r '
	def str: if type == "string" then .[0:500] elif type == "number" then tostring else "" end;
	if type != "object" then error("the payload is not a JSON object") else . end
	| ({observation: "hook-report", hook: .hook_event_name, sessionId: .session_id,
	    agentId: .agent_id, agentType: .agent_type, sessionSource: .source, reason: .reason,
	    stopHookActive: .stop_hook_active, cwd: .cwd, model: .model,
	    transcript: (.agent_transcript_path // .transcript_path)}
	   | map_values(if type == "boolean" then . else str end) | with_entries(select(.value != ""))) as $base
	| @sh "ev=\(.hook_event_name | str) sid=\(.session_id | str) aid=\(.agent_id | str) atype=\(.agent_type | str) src=\(.source | str) base=\($base | tojson)"
' 2>/dev/null) || { warn "malformed payload (not one JSON object); nothing recorded"; exit 0; }
ev= sid= aid= atype= src= base=
eval "$vars"

case $ev in
SessionStart | SubagentStart | SubagentStop | Stop | SessionEnd) ;;
'')
	warn "payload without hook_event_name; nothing recorded"
	exit 0
	;;
*)
	warn "ignoring hook event $ev"
	exit 0
	;;
esac
[ -n "$sid" ] || { warn "$ev payload without session_id; nothing recorded"; exit 0; }

# key ID: ID itself when it is a plain id, else a checksum of it, so that
# child ids stay short and printable whatever the payload holds.
key() {
	case $1 in
	*[!A-Za-z0-9_-]*) ;;
	?*) if [ ${#1} -le 60 ]; then
		printf '%s' "$1"
		return
	fi ;;
	esac
	printf 'h%s' "$(printf '%s' "$1" | cksum | tr ' ' '-')"
}

skey=$(key "$sid")
journal=${LCWRAP_JOURNAL:-$("$LCWRAP" journal path 2>/dev/null)} || journal=
[ -n "$journal" ] || { warn "cannot tell where the journal is; nothing recorded"; exit 0; }
state=${LCWRAP_HOOK_STATE:-$journal.hooks}/$skey
mkdir -p "$state" 2>/dev/null || { warn "cannot create $state; nothing recorded"; exit 0; }

# A hook is stateless, but a session or sub-agent can start again (resume,
# compact, a new message to a teammate) and stop twice (a Stop hook that
# kept it going). Each record file holds "N open|ended ADOPTED_AT": the
# lifecycle number, whether it ended, and when this source first saw it.
load() {
	n=0 st=none at=
	[ -r "$1" ] && read -r n st at <"$1"
	case $n in '' | *[!0-9]*) n=0 st=none ;; esac
}
save() { printf '%s %s %s\n' "$2" "$3" "$4" >"$1.$$" && mv -f "$1.$$" "$1"; }
# child BASE N: the child id of lifecycle N (a new one for each restart).
child() { if [ "$2" -le 1 ]; then printf '%s' "$1"; else printf '%s+%s' "$1" "$2"; fi; }
# agent N: the child id of lifecycle N of this sub-agent, agent first, so
# that the sub-agents of one session differ in a narrow status column.
agent() { printf '%s@cc-%s' "$(child "$akey" "$1")" "$skey"; }
# details EXTRA: base with more fields (EXTRA is JSON members, no braces).
details() { printf '%s,%s}' "${base%\}}" "$1"; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# emit CHILD ADOPTED_AT FLAGS...: one event; a refusal is one line on stderr.
emit() {
	ec=$1 ea=$2
	shift 2
	if ! out=$("$LCWRAP" emit --source "$SOURCE" --profile external --external --adopted-at "$ea" \
		--lock-timeout 1s --child-id "$ec" "$@" </dev/null 2>&1 >/dev/null); then
		warn "event for $ec not recorded: $out"
	fi
}

LIMITS_SESSION='"limits":"hook reports only: Claude Code said this session started, finished a response or ended; its process, progress, heartbeat, exit status, outcome and cancellation are unknown to this source, which cannot stop it"'
LIMITS_AGENT='"limits":"hook reports only: Claude Code said this sub-agent started or stopped; whether it did its job, how it ended, its progress, heartbeat and cancellation are unknown to this source, which cannot stop it"'
UNKNOWN_END='"exitStatus":"unknown","outcome":"unknown"'

# session: the session's current lifecycle (sc, sat), opened if needed.
session() {
	load "$state/session"
	if [ "$st" = open ]; then
		sc=$(child "cc-$skey" "$n") sat=$at
		return 1 # already open
	fi
	n=$((n + 1)) sat=$(now)
	sc=$(child "cc-$skey" "$n")
	first='"firstSeen":"'$ev'"'
	[ "$n" -gt 1 ] && first=$first',"resumes":"'$(child "cc-$skey" $((n - 1)))'"'
	[ "$ev" = SessionStart ] || first=$first',"note":"first seen at a '$ev' hook; what came before is unknown"'
	emit "$sc" "$sat" --kind created --state created --details "$(details "$first,$LIMITS_SESSION")"
	save "$state/session" "$n" open "$sat"
}

# aemit CHILD ADOPTED_AT FLAGS...: an event of a sub-agent of this session.
aemit() {
	ac=$1 aa=$2
	shift 2
	emit "$ac" "$aa" --parent-child-id "$sc" --root-child-id "$root" "$@"
}

# stop_agent FILE CHILD ADOPTED_AT NOTE: the sub-agent's terminal event.
stop_agent() {
	aemit "$2" "$3" --kind terminal --state lost --details "$(details "$UNKNOWN_END,\"note\":\"$4\"")"
	save "$1" "$n" ended "$3"
}

case $ev in
SessionStart)
	if ! session; then
		emit "$sc" "$sat" --kind activity --activity "session started again (${src:-source unknown})"
	else
		emit "$sc" "$sat" --kind activity --activity "session started (${src:-source unknown})"
	fi
	;;
Stop)
	session
	emit "$sc" "$sat" --kind activity --activity "finished a response (Stop hook); what comes next is unknown"
	;;
SubagentStart | SubagentStop)
	[ -n "$aid" ] || { warn "$ev payload without agent_id; nothing recorded"; exit 0; }
	session
	root=${LCWRAP_ROOT_CHILD_ID:-$sc}
	akey=$(key "$aid")
	f=$state/agent-$akey
	load "$f"
	if [ "$ev" = SubagentStart ] && [ "$st" = open ]; then
		aemit "$(agent "$n")" "$at" --kind activity \
			--activity "SubagentStart again: resumed, or a new message to a teammate"
	elif [ "$ev" = SubagentStop ] && [ "$st" = ended ]; then
		aemit "$(agent "$n")" "$at" --kind diagnostic \
			--details "$(details '"note":"another SubagentStop for a sub-agent already recorded as ended: it may have gone on after the first one (a Stop hook can keep it running); its record stays ended"')"
	else
		if [ "$st" = open ]; then
			stop_agent "$f" "$(agent "$n")" "$at" \
				"stopped; outcome unknown to this source: a SubagentStop hook says the sub-agent stopped, not whether it did its job or how it ended"
			exit 0
		fi
		n=$((n + 1)) at=$(now)
		c=$(agent "$n")
		first='"firstSeen":"'$ev'"'
		[ "$n" -gt 1 ] && first=$first',"resumes":"'$(agent $((n - 1)))'"'
		[ "$ev" = SubagentStart ] || first=$first',"note":"first seen at a SubagentStop hook; what came before is unknown"'
		aemit "$c" "$at" --kind created --state created --details "$(details "$first,$LIMITS_AGENT")"
		if [ "$ev" = SubagentStart ]; then
			aemit "$c" "$at" --kind activity --activity "${atype:-unnamed} sub-agent started"
			save "$f" "$n" open "$at"
		else
			stop_agent "$f" "$c" "$at" \
				"stopped; outcome unknown to this source: a SubagentStop hook says the sub-agent stopped, not whether it did its job or how it ended"
		fi
	fi
	;;
SessionEnd)
	load "$state/session"
	[ "$st" = ended ] && exit 0 # reported already
	session
	root=${LCWRAP_ROOT_CHILD_ID:-$sc}
	for f in "$state"/agent-*; do
		case ${f##*/} in *.*) continue ;; esac
		load "$f"
		[ "$st" = open ] || continue
		akey=${f##*/agent-}
		stop_agent "$f" "$(agent "$n")" "$at" \
			"the session ended before a SubagentStop hook reported this sub-agent; how it ended is unknown to this source"
	done
	emit "$sc" "$sat" --kind terminal --state lost \
		--details "$(details "$UNKNOWN_END,\"note\":\"session ended (reason in details.reason, as Claude Code gave it); outcome unknown to this source: a SessionEnd hook says the session ended, not whether its work was done\"")"
	load "$state/session"
	save "$state/session" "$n" ended "$sat"
	;;
esac
exit 0
