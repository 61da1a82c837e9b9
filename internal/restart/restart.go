package restart

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Policy says when a run starts the command again.
type Policy string

// The policies. The zero value is No.
const (
	No        Policy = ""
	OnFailure Policy = "on-failure" // until an attempt ends completed
	Always    Policy = "always"     // whatever the outcome
)

// maxBackoffFactor caps the delay at this many times Restart.Backoff.
const maxBackoffFactor = 30

// Restart is a restart policy with its limits.
type Restart struct {
	Policy Policy
	// MaxAttempts bounds the attempts, the first included; 0 means no
	// limit.
	MaxAttempts int
	// Backoff is the wait before the second attempt; each later wait
	// doubles it, up to 30 times Backoff, and each is shortened by a
	// random amount of up to half (jitter).
	Backoff time.Duration
}

// Parse reads "no", "on-failure" or "always"; anything else is an error
// naming it and the choices.
func Parse(s string) (Policy, error) {
	switch s {
	case "no":
		return No, nil
	case string(OnFailure), string(Always):
		return Policy(s), nil
	}
	return "", fmt.Errorf("%q (choose no, on-failure or always)", s)
}

// Valid reports whether r names a known policy.
func (r Restart) Valid() bool {
	return slices.Contains([]Policy{No, OnFailure, Always}, r.Policy)
}

// Delay is the wait before the attempt that follows attempt n (1 is the
// first of the run): Backoff, doubled for each later attempt up to 30
// times Backoff, shortened by a random amount of up to half (jitter).
func (r Restart) Delay(n int) time.Duration {
	limit := time.Duration(math.MaxInt64) // for a Backoff too long to multiply
	if r.Backoff <= limit/maxBackoffFactor {
		limit = maxBackoffFactor * r.Backoff
	}
	d := r.Backoff
	for i := 1; i < n && d < limit; i++ {
		if d > limit/2 {
			d = limit
		} else {
			d *= 2
		}
	}
	return d - rand.N(d/2+1)
}

// Ending is what the decision after an attempt looks at: how the attempt
// ended, as supervise saw it.
type Ending struct {
	// Completed: the attempt's terminal state was completed.
	Completed bool
	// CancelSignal names the cancel request (a signal lcwrap passed on,
	// or the run's context) that ended the attempt; empty when none did.
	CancelSignal string
	// StartFailed: the command could not be started.
	StartFailed bool
	// Interrupted: SIGINT killed the child without a cancel request (a
	// terminal's Ctrl-C reaches the child directly).
	Interrupted bool
}

// Stop says why no further attempt follows where the policy alone would
// have made one.
type Stop struct {
	Reason      string // "cancel-request", "start-error", "interrupted" or "max-attempts"
	Signal      string // with "cancel-request"
	MaxAttempts int    // with "max-attempts"
	Why         string // one clause for a person
}

// Next decides whether attempt n (1 is the first), which ended as e, is
// followed by another. It answers false with a zero Stop when the policy
// itself ends the loop (no restarts, or on-failure after a completed
// attempt), and false with the Stop that overrode the policy otherwise.
func (r Restart) Next(e Ending, n int) (bool, Stop) {
	switch {
	case r.Policy == No, r.Policy == OnFailure && e.Completed:
		return false, Stop{}
	case e.CancelSignal != "":
		return false, Stop{Reason: "cancel-request", Signal: e.CancelSignal,
			Why: "a cancel request (" + e.CancelSignal + ") ended this attempt"}
	case e.StartFailed:
		return false, Stop{Reason: "start-error", Why: "the command could not be started"}
	case e.Interrupted:
		return false, Stop{Reason: "interrupted", Why: "SIGINT killed the child (a terminal's Ctrl-C reaches it directly)"}
	case r.MaxAttempts > 0 && n >= r.MaxAttempts:
		return false, Stop{Reason: "max-attempts", MaxAttempts: r.MaxAttempts,
			Why: fmt.Sprintf("this was attempt %d of at most %d", n, r.MaxAttempts)}
	}
	return true, Stop{}
}

// NextChild names the attempt that follows attempt n of a run whose first
// attempt had child id base and attempt number first: "<base>-a<attempt>",
// with the attempt counted up.
func NextChild(base string, first int64, n int) (childID string, attempt int64) {
	attempt = first + int64(n)
	return base + "-a" + strconv.FormatInt(attempt, 10), attempt
}
