// Package procid reads process identity from the operating system: a
// process is (pid, start time) on one boot of one host, so a reused PID is a
// different process.
//
// # What it promises
//
// Of reads a live process's identity; Check compares a recorded identity
// with what the process table shows now and answers Alive, Gone or ProcUnknown:
//
//   - Gone only on proof: same host and boot, and the pid is absent, is a
//     zombie (it has exited; kill(pid, 0) would still succeed), or has a
//     different start time; or the same host rebooted.
//   - ProcUnknown when proof is impossible from here: another host, or an
//     identity without a start time whose pid is present.
//   - Alive when the same pid with the same start time is present and not a
//     zombie. A pid that exists but that we may not signal is still alive.
//
// On Linux it reads /proc directly (start time in clock ticks since boot),
// keeping heavy packages off lcwrap's start path. Elsewhere, or with the
// build tag lcwrap_gopsutil, it uses gopsutil (start time in unix
// milliseconds). An Identity carries its Clock, so each build reads the
// other's identities: Check converts between the two on Linux and never
// answers Gone merely because the clocks differ (docs/events.md).
//
// ProcTable is the seam tests use to simulate PID reuse without waiting for the
// kernel to recycle a pid.
//
// # What it refuses to claim
//
// Presence is not progress: Alive says a process with that identity exists,
// not that it is working, healthy, or the program it used to be. This
// package never sends a signal.
//
// Where it sits among the other packages: docs/design.md.
package event
