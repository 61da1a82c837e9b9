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
// event lines share with the child's output (or Run must see it: output
// activity, a pty). A Stream passes the child's bytes through unchanged
// and in order, and starts every event line at the beginning of a line.
//
// A terminal of its own, on request (Config.PTY, see PTY). The child's
// stdin, stdout and stderr are a pseudo-terminal, in a session of its
// own; its output goes to Stdout; the window size follows lcwrap's
// terminal (SIGWINCH); lcwrap's terminal, when stdin is one, is raw while
// the child runs and restored when it ends, is stopped (job control), is
// cancelled, times out, or lcwrap panics (Run defers the restore, and
// the caller's deferred PTY.Close restores too). The pty master's EIO is
// the end of the output. Stdin that is no terminal is copied as it is,
// and its end is the terminal's end-of-file character.
//
// Output activity, on request (Config.Activity). The child's latest
// complete output line (stdout and stderr, or the pty) becomes an
// activity event: terminal escape sequences and control characters
// stripped, the text after the last carriage return, redacted, cut to
// 512 characters; empty lines skipped; at most one event per second, the
// newest line winning; the line still waiting when the child ends is
// written before the terminal event. Activity never changes state.
//
// sd_notify, on request (Config.Notify). The child gets a NOTIFY_SOCKET:
// a unix datagram socket in a new 0700 directory, removed when Run
// returns. Only the child and its descendants may speak there: each
// datagram's sender (its credentials) must lead to the child through its
// parent pids, or it is rejected. READY=1 makes a child held in starting
// (Config.ReadyNotify) running; Config.ReadyTimeout cancels one that
// never gets ready (exit code 124). STATUS= is activity (at most ten per
// second, the newest never dropped), WATCHDOG=1 a heartbeat of the
// child's own, STOPPING=1 the activity "stopping", LCWRAP_STATE=waiting
// and running move between waiting and running, and nothing else. The
// descriptor BARRIER=1 brings is closed once every earlier datagram has
// been recorded; other received descriptors are closed too. Unknown keys
// are ignored; oversized (over 4096 bytes) or malformed datagrams, and
// ones that cannot be applied, become diagnostics: bounded, redacted, at
// most one per second, the others counted. What the child sent before it
// ended is recorded before the terminal event, in the order it was sent.
// With Config.Watchdog the child's WATCHDOG_USEC is set and its pings are
// the only heartbeats: a child that falls silent goes stale.
//
// Restarts, on request (Config.Restart). Each attempt is a lifecycle of
// its own: child id <ChildID>-a<attempt> after the first, the same root
// and parent, the attempt counted up; the attempt that ended says in a
// diagnostic which attempt follows and when (exponential backoff with
// jitter, capped at 30 times Restart.Backoff), or why none does. A cancel
// request, during an attempt or the wait between two, ends the loop; the
// result is the last attempt's.
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
// is reported as failed by SIGINT; with a pty, a Ctrl-C typed at lcwrap's
// raw terminal is a byte that the child's own terminal turns into SIGINT
// for its foreground group, reported the same way. An activity line is
// what the child last printed, not a claim about what it is doing or
// whether it is making progress; a STATUS= is what the child said about
// itself, and a WATCHDOG=1 ping proves the sender alive, not making
// progress. lcwrap never enforces the watchdog (it kills nothing for
// missing pings) and cannot check a sender that has exited and been
// reaped before its datagram is read: such a datagram is rejected. A
// child that exits with a success code without ever sending READY=1
// under Config.ReadyNotify is failed, not completed. The environment is
// never recorded.
package supervise
