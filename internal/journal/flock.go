package journal

import (
	"errors"
	"math/rand/v2"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// This file is the one wait for an flock(2) in lcwrap: the journal's
// kernel lock and the agent's session store (internal/agent) take theirs
// with Flock. It tries at least once, never pauses past the deadline, and
// leaves to its caller whether the file locked is still the one at its
// path.

// ErrFlockTimeout means the flock was still held by another at the
// deadline.
var ErrFlockTimeout = errors.New("flock: still held at the deadline")

// Backoff paces the tries of a lock: the pause starts at Min and doubles
// up to Max, each one jittered to between half and all of it, and never
// runs past the deadline. The zero value pauses 20 µs to 2 ms.
type Backoff struct {
	Min, Max time.Duration
	next     time.Duration
}

// Pause sleeps before the next try (the kernel's timer precision on
// Linux: time.Sleep rounds short sleeps up to about a millisecond on
// some virtual machines).
func (b *Backoff) Pause(deadline time.Time) {
	if b.Min <= 0 {
		b.Min = 20 * time.Microsecond
	}
	if b.Max < b.Min {
		b.Max = max(b.Min, 2*time.Millisecond)
	}
	if b.next == 0 {
		b.next = b.Min
	}
	d := b.next/2 + rand.N(b.next/2+1)
	sleep(max(min(d, time.Until(deadline)), time.Microsecond))
	b.next = min(2*b.next, b.Max)
}

// tryFlock takes the lock if it is free. Outcomes: true; false when another
// holds it; an error from flock(2) otherwise.
func tryFlock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK), errors.Is(err, unix.EINTR):
		return false, nil
	}
	return false, err
}

// Flock takes an exclusive flock on f, trying until deadline with b's pauses. Outcomes:
// nil, the lock held; ErrFlockTimeout; an error from flock(2).
func Flock(f *os.File, deadline time.Time, b *Backoff) error {
	for {
		ok, err := tryFlock(f)
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return ErrFlockTimeout
		}
		b.Pause(deadline)
	}
}

// unflock releases the flock (closing f releases it too).
func unflock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
