package restart

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
