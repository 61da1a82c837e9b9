// Package wrapsig delivers a signal to one verified process (an lcwrap
// wrapper, for `lcwrap cancel`) so that a recycled pid is never hit.
//
// # What it promises
//
// Open takes a handle on the pid first (a pidfd on Linux), then checks the
// recorded identity (pid, start time, boot, host) in the process table,
// then asks the kernel, through the handle, whether the caller may signal
// the process (signal 0, which delivers nothing). A handle names one
// process for its whole life: if the pid was recycled before the handle
// was opened, the check after it sees the newcomer's start time and
// refuses; if the process dies after, a signal through the handle fails
// with ErrGone instead of reaching whatever gets the pid next. Nothing is
// sent to a process whose identity did not check out.
//
// Opener and Table are the seams tests use to simulate a recycled pid and
// to record every signal sent.
//
// # What it refuses to claim
//
// A delivered signal is a request: what the process does with it is its
// own business, and the journal, not this package, tells what happened.
// Where the system has no pidfd (other systems, Linux before 5.3, a
// sandbox that forbids it), Open refuses with ErrUnsupported rather than
// fall back to kill(2) by pid.
//
// Where it sits among the other packages: docs/design.md.
package wrapsig
