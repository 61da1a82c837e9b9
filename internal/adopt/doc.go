// Package adopt observes a process lcwrap did not start and records what
// can honestly be said about it: that it was present, and that it is gone.
//
// # What it promises
//
// A process is its identity, (pid, start time) on one boot of one host.
// Open takes a handle on the pid first (a pidfd, where the kernel offers
// one) and reads the identity and command line after, then confirms the
// handle still names the process that was read; so a pid recycled during
// adoption is refused (ErrVanished), never attached to the newcomer.
//
// Follow waits for the exit without a busy loop: in Go's poller on the
// pidfd, or, where no pidfd is available (old kernel, seccomp, other
// systems, or Options.Watch = WatchPoll), by comparing the start time in
// the process table every Options.Poll. A zombie counts as exited. On exit
// it checks the identity again and writes a terminal event with state lost.
//
// The stream of one adopted process is exactly:
//
//  1. created: lineage external, adoptedAt, the adopted-pid-only profile
//     (every capability unknown), details of what was observed (pid, start
//     time, boot, host, executable, redacted command line or "unknown",
//     observation "process-presence");
//  2. one diagnostic stating the limits of a PID-only source;
//  3. either terminal lost (observation "process-exited", exit status
//     "unknown", and why the process is considered gone), or, when
//     observation is stopped first, a diagnostic "observation ended; state
//     unknown" and no terminal event.
//
// # What it refuses to claim
//
// Presence is not agent state: no state_changed, no heartbeat, never
// starting, running, completed, failed or cancelled. Pre-adoption history,
// intent, exit status, terminal cause and cancel authority are unknown.
// Adoption never claims that lcwrap created or owns the process.
//
// This package never sends a signal, under any option: it holds no code
// that can (a test scans its sources to keep it so).
//
// Where it sits among the other packages: docs/design.md.
package adopt
