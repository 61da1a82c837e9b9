// Package supervise launches one child process, stays out of its way, and
// reports its lifecycle through an emit.Child: created → starting →
// running → a terminal event.
//
// # What it promises
//
// One owner of the exit status. Run reaps the child itself with wait4
// (never os/exec's Wait), so the status cannot be lost or stolen: with
// Config.Subreaper (or as PID 1) a single wait4(-1) loop reaps orphans and
// hands the main child's status over untouched. An instant exit still
// produces the whole event sequence.
//
// The child's own stdio. Stdin, Stdout and Stderr are given to the child
// as files; nothing is copied unless a Stream interposes on a stream that
// event lines share with the child's output. A Stream passes the child's
// bytes through unchanged and in order, and starts every event line at the
// beginning of a line.
//
// A clean start. The child gets its own process group, an empty signal
// mask and default dispositions (signals lcwrap inherited as ignored are
// reset, except 32–34, which the Go runtime reserves). When lcwrap is in
// the foreground of its controlling terminal, the child's group becomes
// the foreground group, so the terminal's Ctrl-C reaches the child once
// and never through lcwrap; the foreground comes back to lcwrap's group
// when the child ends or stops. A child stopped by the terminal (Ctrl-Z)
// stops lcwrap too, so the shell sees the job stopped; SIGCONT resumes it.
//
// Signals (see Subscribe). HUP, INT and TERM are cancel requests: the
// first is recorded, each is forwarded to the child's process group.
// QUIT, USR1 and USR2 go to the main child. Every received signal is
// forwarded exactly once. After a cancel request (or Config.Timeout),
// whatever is left of the group once the main child ends gets SIGTERM,
// and anything still alive Config.KillAfter after the cancel gets SIGKILL.
// Without a cancel request, processes left in the group are reported, and
// terminated only with Config.KillLeftovers.
//
// Exit translation is DESIGN.md's table: an exit code in
// Config.SuccessCodes is completed, any other code or an unrequested
// signal is failed, anything after a cancel request is cancelled; the exit
// code is the child's code, 128+signal, 124 after a timeout, 127 for a
// command that cannot be found and 126 for one that cannot be executed
// (those two go from created straight to failed: no process started).
//
// # What it refuses to claim
//
// An exit code is a process exit status, not task success: every terminal
// event says so ("claim": "process-exit-status-only"), and no event ever
// says a task succeeded. A Ctrl-C the child received straight from its
// terminal is not a cancel request lcwrap delivered, so a child it kills
// is reported as failed by SIGINT. The environment is never recorded.
package supervise
