#!/bin/sh
# fake-tests.sh [--fail]: a stand-in for a test runner, for run-local.sh.
# It prints what `go test -v` prints, on stdout and stderr, writes one
# line in two pieces while a lifecycle event is due, ends without a final
# newline, and with --fail fails one test and exits 1, as `go test` does.
#
# Its slow test waits for lcwrap instead of sleeping, so that the log
# shows the same thing on every run, on any machine:
#   - between two lines, until the CI log (FAKE_TESTS_LOG, written by tee)
#     shows a lifecycle line after the line it printed last;
#   - in the middle of a line, until the journal (LCWRAP_JOURNAL, set by
#     lcwrap) holds one more heartbeat: lcwrap holds that heartbeat back
#     until the line ends.
# Each wait gives up after 10 seconds; without those variables it sleeps.
fail=0
[ "${1:-}" = --fail ] && fail=1

# wait_until CMD...: until CMD succeeds, checking every 50ms, at most 10s.
wait_until() {
	i=0
	until "$@"; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}

# event_after LINE: the log holds a lifecycle line after LINE.
event_after() {
	awk -v line="$1" '$0 == line { seen = 1; next } seen && /^\{"schemaVersion":1,/ { found = 1 }
		END { exit !found }' "$FAKE_TESTS_LOG" 2>/dev/null
}

# heartbeats: the heartbeat events of this child in the journal.
heartbeats() {
	grep -c "\"childId\":\"$LCWRAP_CHILD_ID\".*\"kind\":\"heartbeat\"" "$LCWRAP_JOURNAL" 2>/dev/null || :
}
more_heartbeats() { [ "$(heartbeats)" != "$1" ]; }

echo "=== RUN   TestParse"
echo "--- PASS: TestParse (0.00s)"
echo "=== RUN   TestSlow"
if [ -n "${FAKE_TESTS_LOG:-}" ]; then wait_until event_after "=== RUN   TestSlow"; else sleep 1; fi
printf -- '--- PASS: TestSlow '
if [ -n "${LCWRAP_JOURNAL:-}" ] && [ -n "${LCWRAP_CHILD_ID:-}" ]; then
	wait_until more_heartbeats "$(heartbeats)"
else
	sleep 1
fi
printf '(0.30s)\n'
echo "=== RUN   TestFlaky"
echo "flaky_test.go:9: retrying after a timeout" >&2
if [ $fail = 1 ]; then
	echo "--- FAIL: TestFlaky (0.01s)"
	echo "    flaky_test.go:12: got 2, want 3"
	echo "FAIL"
	printf 'fake-tests: exit 1'
	exit 1
fi
echo "--- PASS: TestFlaky (0.01s)"
echo "PASS"
printf 'fake-tests: exit 0'
