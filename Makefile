# lcwrap — every target runs from a clean checkout.
GO        ?= go
BIN       ?= bin/lcwrap
FUZZTIME  ?= 10s
PKGS      := ./...

.PHONY: all build test lint vet fmt-check fuzz bench examples generate pathcount clean

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

# The race detector needs cgo, hence a C compiler (gcc or clang): without
# one, go reports CGO_ENABLED=0 and make test runs without -race, saying
# so; under CI (CI=true) that is a failure instead.
RACE ?= $(shell [ "$$($(GO) env CGO_ENABLED 2>/dev/null)" = 1 ] && echo -race)

# The whole suite: vet, formatting, and every test with the race detector.
test: vet fmt-check
	@if [ -z "$(RACE)" ]; then \
	  if [ "$$CI" = true ]; then echo "make test: no C compiler for the race detector (CGO_ENABLED=0): install gcc" >&2; exit 1; fi; \
	  echo "make test: no C compiler (CGO_ENABLED=0): running the tests WITHOUT the race detector; install gcc or clang for it" >&2; \
	fi
	$(GO) test $(RACE) -count=1 $(PKGS)
	$(GO) test $(RACE) -count=1 -tags lcwrap_gopsutil ./internal/event ./internal/adopt
	$(GO) test $(RACE) -count=1 -tags '$(BUILD_TAGS)' -run '^(TestHelp|TestRootHelp)' ./cmd/lcwrap

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint: vet fmt-check

# Each fuzz target runs for FUZZTIME, seeded from testdata/.
fuzz:
	$(GO) test ./internal/redact -run '^$$' -fuzz '^FuzzText$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/redact -run '^$$' -fuzz '^FuzzJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/event -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/linereader -run '^$$' -fuzz '^FuzzLineReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/journal -run '^$$' -fuzz '^FuzzReplay$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x
	$(GO) test ./internal/journal -run '^$$' -fuzz '^FuzzOwnerRecord$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/journal -run '^$$' -fuzz '^FuzzQuarantineReader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x
	$(GO) test ./cmd/lcwrap -run '^$$' -fuzz '^FuzzQuickFlags$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/event -run '^$$' -fuzz '^FuzzDecoderAgainstEncodingJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/event -run '^$$' -fuzz '^FuzzParseStat$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/projection -run '^$$' -fuzz '^FuzzApply$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x
	$(GO) test ./internal/notify -run '^$$' -fuzz '^FuzzParseNotify$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/lastline -run '^$$' -fuzz '^FuzzActivityText$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/agent/claudecode -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/agent/claudecode -run '^$$' -fuzz '^FuzzStreamLine$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/hookhttp -run '^$$' -fuzz '^FuzzReadRequest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/event -run '^$$' -fuzz '^FuzzAgentDetails$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/event -run '^$$' -fuzz '^FuzzDetailsMatchOldEncoding$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/agent/codex -run '^$$' -fuzz '^FuzzExecLine$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/agent/codex -run '^$$' -fuzz '^FuzzRolloutLine$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/agent/codex -run '^$$' -fuzz '^FuzzLines$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/event -run '^$$' -fuzz '^FuzzCodexDetails$$' -fuzztime $(FUZZTIME)

# The examples on their own (make test runs them too, through go test ./...).
examples:
	$(GO) test -race -count=1 ./examples/...

# Benchmarks against their peers, side by side; writes bench/RESULTS.md.
bench: build
	bash bench/run.sh

# Rewrite the generated parts of the docs (docs/run.md's exit-status
# table, from internal/exitcode); make test fails while they differ.
generate:
	$(GO) generate ./docs

# The packages a plain run crosses (coverage of one 'lcwrap -- sh -c
# "exit 3"'); fails above six. Not in make test: a coverage build of the
# whole module takes about a minute of CPU from a cold cache.
pathcount:
	bash bench/pathcount.sh

clean:
	rm -rf bin bench/out

# The journal's chaos test at full size: 8 writers × 1000 appends of 3 KB
# lines, the lock owner SIGKILLed about every millisecond for 10 s, at the
# default stale age and at 5 ms; and the stall after a killed holder (50
# rounds). make test runs a reduced count. Figures in the test log.
.PHONY: chaos
chaos:
	LCWRAP_CHAOS_FULL=1 $(GO) test -count=1 -v -run '^(TestChaos|TestKilledOwnerReclaimedAtOnce)$$' ./journal

# Ships a journal that lcwrap writes through an OpenTelemetry Collector built
# from the Go module proxy (examples/otel-collector/); not part of `make test`.
.PHONY: otel-demo
otel-demo:
	bash examples/otel-collector/demo.sh
