#!/usr/bin/env bash
# The packages a plain run crosses: `lcwrap -- sh -c 'exit 3'`, built with
# coverage of every package of the module, run once; the packages with
# any statement run are the ones it crossed (package-level initialisers
# are not statements: a package only linked does not count). Issue 20
# holds the run path to at most six: cmd/lcwrap, supervise, emit, journal,
# event, redact. Exit status 1 when more than PATH_LIMIT (default 6).
set -euo pipefail
LIMIT=${PATH_LIMIT:-6}
D=$(mktemp -d "${TMPDIR:-/tmp}/lcwrap-pathcount.XXXXXX")
trap 'rm -rf "$D"' EXIT
go build -cover -coverpkg=./... -o "$D/lcwrap" ./cmd/lcwrap
mkdir "$D/cov"
set +e
GOCOVERDIR="$D/cov" LCWRAP_JOURNAL="$D/journal/j.jsonl" "$D/lcwrap" -- sh -c 'exit 3'
code=$?
set -e
if [ "$code" != 3 ]; then
  echo "pathcount: the run exited $code, not the child's 3" >&2
  exit 2
fi
crossed=$(go tool covdata percent -i "$D/cov" | awk '$NF == "statements" && $(NF-2) != "0.0%" { print $1 }')
n=$(echo "$crossed" | grep -c .)
echo "$crossed"
echo "$n packages crossed by \`lcwrap -- sh -c 'exit 3'\` (limit $LIMIT)"
[ "$n" -le "$LIMIT" ]
