#!/bin/sh
# demo.sh: replay the recorded Claude Code hook payloads in testdata/
# (in name order) through `lcwrap hook claude-code` into a fresh journal,
# as Claude Code would call the hook, then check and show what it
# recorded: `lcwrap journal verify`, `lcwrap validate`, `lcwrap status --all`.
#
# Exits non-zero when a hook call exits non-zero or prints on stdout, or
# the journal does not check out. Works in a temp directory, removed at
# the end (KEEP=1 keeps it).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
say() { printf 'hooks-demo: %s\n' "$*"; }
fail() {
	printf 'hooks-demo: FAIL: %s\n' "$*" >&2
	exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/lcwrap-hooks-demo.XXXXXX")
cleanup() { if [ "${KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

# A journal of its own, and no lineage from an lcwrap that may run this.
unset LCWRAP_CHILD_ID LCWRAP_ROOT_CHILD_ID
LCWRAP_JOURNAL=$work/journal.jsonl
export LCWRAP_JOURNAL
if ! command -v lcwrap >/dev/null 2>&1; then
	say "building lcwrap from $root"
	(cd "$root" && go build -o "$work/bin/lcwrap" ./cmd/lcwrap)
	PATH=$work/bin:$PATH
fi

for f in "$here"/testdata/*.json; do
	name=${f##*/}
	ev=$(sed -n 's/.*"hook_event_name":"\([A-Za-z]*\)".*/\1/p' "$f")
	rc=0
	out=$(lcwrap hook claude-code <"$f" 2>"$work/stderr") || rc=$?
	say "$name (${ev:-?}): exit $rc$(sed 's/^/; stderr: /' "$work/stderr" | tr -d '\n')"
	[ "$rc" = 0 ] || fail "the hook exited $rc on $name"
	[ -z "$out" ] || fail "the hook printed on stdout for $name: $out"
	case $name in
	03-*)
		say "lcwrap status, while two sub-agents are at work:"
		lcwrap status
		;;
	esac
done

say "lcwrap journal verify"
lcwrap journal verify
say "lcwrap validate"
lcwrap validate "$LCWRAP_JOURNAL"
say "lcwrap status --all"
lcwrap status --all
