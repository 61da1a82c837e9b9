// Package supervise launches one child process, stays out of its way, and
// reports its lifecycle through an emit.Child: created → starting →
// running → a terminal event, on the edges lcwrap takes for a launched
// child (a subset of jsonl's transition table). Run(ctx, cfg) runs it;
// cancelling ctx is a cancel request, like SIGTERM.
//
// # What it promises
//
// One owner of the exit status: Run reaps the child itself (with
// Config.Subreaper, or as PID 1, one wait4(-1) loop reaps orphans too), and
// the child's exit code is lcwrap's. A clean start: its own process group,
// an empty signal mask, default dispositions, the terminal's foreground
// when lcwrap has it. Signals it receives are forwarded exactly once, and
// reach only the child it started (through the pidfd its clone made); HUP,
// INT and TERM are cancel requests, SIGKILL follows after KillAfter. The
// child's own stdio, untouched, unless Interpose decided that a stream is
// shared with event lines, tapped, or must be read (output activity, a
// pty: see PTY): a Stream then passes the child's bytes through unchanged
// and in order and starts every event line at the beginning of a line.
// On request: a pty, output activity, sd_notify (the socket and the
// judging of datagrams are internal/notify's; what they mean for the
// lifecycle is decided here), restarts with backoff. Observation never
// slows or breaks the child.
//
// # What it refuses to claim
//
// An exit code is a process exit status, not task success: every terminal
// event says so ("claim": "process-exit-status-only"), and no event ever
// says a task succeeded. An activity line is what the child last printed;
// a STATUS= or a WATCHDOG=1 is what the child said about itself, never
// proof of progress; lcwrap never enforces the watchdog. A child that
// never sent READY=1 under Config.ReadyNotify is failed, not completed.
// The environment is never recorded.
//
// The details of each behaviour are in docs/run.md, docs/interactive.md
// and docs/notify.md (exit codes in docs/run.md); the layers in
// docs/design.md.
package supervise
