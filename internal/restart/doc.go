// Package restart is a restart policy and its limits: when a run starts
// the command again (no, on-failure, always), how many attempts at most,
// and how long to wait before each (exponential backoff with jitter,
// capped), and the decision after each attempt: whether another follows,
// or what stopped the loop early (a cancel request, a command that cannot
// start, a Ctrl-C, the last allowed attempt), and the next attempt's child
// id. Running the attempts, and recording those decisions, is supervise's.
//
// # What it promises
//
// Parse accepts exactly the three policy names. Delay never exceeds 30
// times Backoff, never overflows, and is at least half of the undithered
// wait.
//
// # What it refuses to claim
//
// A restart is a new lifecycle, not a continuation: nothing here says an
// attempt that ended completed did its task. See docs/design.md.
package restart
