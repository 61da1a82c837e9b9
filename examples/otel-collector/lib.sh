# Shared start of the Collector demos (demo.sh, fleet-demo.sh), sourced
# with $demo set to the demo's name: messages, the tools they need, and
# the two programs they run, built from this checkout.
#   after it: $here (this folder), $root (the checkout, also the working
#   directory), $lcwrap and $col (the binaries), $start (seconds), say, fail.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

say() { printf '%s: %s\n' "$demo" "$*"; }
fail() {
	printf '%s: FAIL: %s\n' "$demo" "$*" >&2
	exit 1
}

# The demo's events must not inherit lineage from an lcwrap that runs make.
unset LCWRAP_CHILD_ID LCWRAP_ROOT_CHILD_ID LCWRAP_JOURNAL

if ! command -v jq >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing jq"
		apt-get install -y -qq jq >/dev/null || { apt-get update -qq && apt-get install -y -qq jq >/dev/null; }
	else
		fail "jq is required (apt-get install jq)"
	fi
fi

start=$(date +%s)

# lcwrap itself, from this checkout.
say "building bin/lcwrap"
go build -o bin/lcwrap ./cmd/lcwrap
lcwrap="$root/bin/lcwrap"

# The collector distribution: built once, rebuilt only when its module
# changes (its sources, its own processor's included). The first build
# fetches the collector modules from the module proxy and compiles them (a
# few minutes on two cores). go.mod and go.sum are complete, so the build
# runs read-only and never edits them.
col="$root/bin/lcwrap-otelcol"
rebuild=0
[ -x "$col" ] || rebuild=1
for f in "$here"/collector/go.mod "$here"/collector/go.sum "$here"/collector/*.go "$here"/collector/*/*.go; do
	case "$f" in *_test.go) continue ;; esac
	if [ "$f" -nt "$col" ]; then rebuild=1; fi
done
if [ "$rebuild" = 1 ]; then
	say "building bin/lcwrap-otelcol (collector v0.165; slow the first time)"
	t0=$(date +%s)
	(cd "$here/collector" && GOFLAGS="-mod=readonly -buildvcs=false" nice -n 10 go build -trimpath -o "$col" .)
	say "collector built in $(($(date +%s) - t0))s"
else
	say "reusing bin/lcwrap-otelcol"
fi
