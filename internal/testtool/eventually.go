package testtool

import "time"

// WaitLimit is how long Eventually waits: long enough for a loaded
// machine running the race detector, where a condition that holds at all
// holds within seconds.
const WaitLimit = 30 * time.Second

// Poll checks cond until it holds or limit has passed, pausing 1 ms at
// first and doubling up to 20 ms between checks. It reports whether cond
// held; it checks once more at the limit, so a slow machine never fails a
// condition that holds by then.
func Poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(wait)
	}
}

// Eventually polls cond (as Poll) until it holds, failing t with "timed
// out waiting for WHAT" after WaitLimit. It is the one poll loop of the
// tests: a test waits on an event with a deadline, never a fixed sleep.
func Eventually(t TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, WaitLimit, what, cond)
}

// EventuallyWithin is Eventually with a limit of its own.
func EventuallyWithin(t TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(limit, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}
