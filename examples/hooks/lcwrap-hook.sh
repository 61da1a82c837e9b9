#!/bin/sh
# lcwrap-hook.sh: retired. `lcwrap hook claude-code` records Claude Code's
# hook payloads itself (in Go, no jq; see docs/agents.md), and
# `lcwrap hook claude-code --print-settings` prints the settings that call
# it. This script only hands its payload over, for settings that still
# name it. Like the hook, it never fails the agent: it prints nothing on
# stdout and exits 0, saying on stderr when lcwrap is missing.
#
# Environment: LCWRAP_BIN (lcwrap; default: lcwrap on PATH), and what
# `lcwrap hook claude-code` reads ($LCWRAP_JOURNAL).
LCWRAP=${LCWRAP_BIN:-lcwrap}
if ! command -v "$LCWRAP" >/dev/null 2>&1; then
	cat >/dev/null # read the payload, so that the agent never writes into a closed pipe
	printf 'lcwrap-hook: lcwrap not found; nothing recorded\n' >&2
	exit 0
fi
exec "$LCWRAP" hook claude-code "$@"
