# lcwrap — every target runs from a clean checkout.
GO        ?= go
BIN       ?= bin/lcwrap
FUZZTIME  ?= 10s
PKGS      := ./...

.PHONY: all build test race-check lint vet fmt-check fuzz fuzz-list bench examples generate pathcount clean

all: build

# urfave_cli_no_template: the command line without text/template, which
# only its help formatting uses; it saves lcwrap's start-up about 0.3 ms.
BUILD_TAGS ?= urfave_cli_no_template

# CGO_ENABLED=0: a static binary. The net package (hook HTTP servers)
# would otherwise link libc dynamically, and the dynamic loader costs every
# `lcwrap -- CMD` about a millisecond before main (measured in bench/).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -o $(BIN) ./cmd/lcwrap
	$(GO) build -trimpath -o $(dir $(BIN))lcwrap-top ./cmd/lcwrap-top
	CGO_ENABLED=0 $(GO) build -trimpath -o $(dir $(BIN))lcwrap-serve ./cmd/lcwrap-serve

# The race detector needs cgo: a C compiler (gcc or clang), and cgo not
# turned off (CGO_ENABLED=0 in the environment). Without it make test runs
# without -race, saying which of the two it is; under CI (CI=true) that is
# a failure instead.
RACE ?= $(shell [ "$$($(GO) env CGO_ENABLED 2>/dev/null)" = 1 ] && echo -race)

# race-check says why make test runs without the race detector, if it does.
race-check:
	@if [ -z "$(RACE)" ]; then \
	  if [ "$$CGO_ENABLED" = 0 ]; then why="CGO_ENABLED=0 is set in the environment, and the race detector needs cgo"; fix="unset CGO_ENABLED"; \
	  elif [ "$$($(GO) env CGO_ENABLED 2>/dev/null)" != 1 ]; then why="go finds no C compiler, and the race detector needs cgo"; fix="install gcc or clang"; \
	  else why="RACE is set empty"; fix="leave RACE unset"; fi; \
	  if [ "$$CI" = true ]; then echo "make test: no race detector: $$why; $$fix (under CI=true this is a failure)" >&2; exit 1; fi; \
	  echo "make test: $$why: running the tests WITHOUT the race detector; $$fix for it" >&2; \
	fi

# The whole suite: vet, formatting, and every test with the race detector.
test: vet fmt-check race-check
	$(GO) test $(RACE) -count=1 $(PKGS)
	$(GO) test $(RACE) -count=1 -tags lcwrap_gopsutil ./internal/event ./internal/adopt
	$(GO) test $(RACE) -count=1 -tags '$(BUILD_TAGS)' -run '^(TestHelp|TestRootHelp)' ./cmd/lcwrap

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint: vet fmt-check

# Every fuzz target runs for FUZZTIME, seeded from testdata/. The list is
# derived from the test files (make fuzz-list prints it: package and
# target), so a new target is never left out; docs/make_test.go holds it
# to the targets go/parser finds.
FUZZ_LIST = grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\./\(.*\)/[^/]*:func |./\1 |' | sort

fuzz:
	@$(FUZZ_LIST) | while read -r pkg target; do \
	  echo "$(GO) test $$pkg -run '^$$' -fuzz '^$$target$$' -fuzztime $(FUZZTIME)"; \
	  $(GO) test "$$pkg" -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 50x || exit 1; \
	done

fuzz-list:
	@$(FUZZ_LIST)

# The examples on their own (make test runs them too, through go test ./...).
examples:
	$(GO) test -race -count=1 ./examples/...

# Benchmarks against their peers, side by side; writes bench/RESULTS.md.
bench: build
	bash bench/run.sh

# Rewrite the generated parts of the docs (docs/run.md's exit-status
# table, from internal/exitcode); make test fails while they differ.
generate:
	$(GO) generate ./docs ./internal/redact

# The packages a plain run crosses (coverage of one 'lcwrap -- sh -c
# "exit 3"'); fails above six. Not in make test: a coverage build of the
# whole module takes about a minute of CPU from a cold cache.
pathcount:
	bash bench/pathcount.sh

clean:
	rm -rf bin bench/out

# The journal's chaos test at full size: 8 writers × 1000 appends of 3 KB
# lines, the lock owner SIGKILLed about every millisecond for 10 s, at the
# default stale age and at 5 ms; two of the writers are foreign (no kernel
# lock, the reference writer's owner record) and one runs in a child PID
# namespace (unshare -p -f --mount-proc, as root; elsewhere it runs beside
# the others and the log says why); and the stall after a killed holder
# (50 rounds). make test runs a reduced count. Figures in the test log.
.PHONY: chaos
chaos:
	LCWRAP_CHAOS_FULL=1 $(GO) test -count=1 -v -timeout 30m -run '^(TestChaos|TestKilledOwnerReclaimedAtOnce)$$' ./internal/journal

# Three hosts' journals shipped through OpenTelemetry Collectors (an agent
# per host, one gateway) built from the Go module proxy, read back by the
# fleet readers; kills the gateway and one agent on the way
# (examples/otel-collector/, docs/fleet.md). Not part of `make test`.
.PHONY: fleet-demo
fleet-demo:
	bash examples/otel-collector/fleet-demo.sh
