# Shared helpers for bench/*.sh (sourced).
BENCH_TMP=${BENCH_TMP:-/tmp/lcwrap-bench}
mkdir -p "$BENCH_TMP"
LCWRAP=${LCWRAP:-$PWD/bin/lcwrap}
TIMEIT="$BENCH_TMP/timeit"
GENEVENTS="$BENCH_TMP/genevents"
[ -x "$TIMEIT" ] || go build -o "$TIMEIT" ./bench/timeit
[ -x "$GENEVENTS" ] || go build -o "$GENEVENTS" ./bench/genevents

# ensure_peers installs the peer tools the benchmarks compare against.
ensure_peers() {
  local missing=()
  command -v jq >/dev/null || missing+=(jq)
  command -v tini >/dev/null || missing+=(tini)
  command -v dumb-init >/dev/null || missing+=(dumb-init)
  command -v pidwait >/dev/null || missing+=(procps)
  command -v script >/dev/null || missing+=(bsdutils)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing peers: ${missing[*]}" >&2
    (apt-get update -qq && apt-get install -y -qq "${missing[@]}") >&2 || echo "could not install ${missing[*]}" >&2
  fi
}

machine_line() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
  echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}, kernel $(uname -r), $(go version | cut -d' ' -f3)."
  echo
  echo "Peers: jq $(jq --version 2>/dev/null | sed 's/jq-//'), tini $(tini --version 2>/dev/null | awk '{print $3}'), dumb-init $(dumb-init --version 2>&1 | awk '{print $2}'), procps $(pidwait -V 2>/dev/null | awk '{print $NF}')."
}

# ratio A B: A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
