// Package cancel is the protocol of lcwrap cancel: authority first, then a
// record, then the signal, so that nothing is sent that the journal does
// not show and nothing is sent without verified authority. Cancel
// authority lives here and nowhere else.
//
// # What it promises
//
// CheckAuthority decides, from the projection of the journal and the
// process table, whether lcwrap may cancel a child from here, and fails
// closed: an unknown child, a cancel capability that is not known (every
// adopted or external child), a terminal state, a wrapper on another host
// or without a recorded host or start time, a wrapper the process table
// cannot vouch for, a wrapper provably gone, or a child not yet started
// are each a refusal with its own sentinel. Recorder records a request
// (and, if it never reached the wrapper, that too) as diagnostic events of
// its own source, through internal/reconcile's writer.
//
// Send reads the journal, checks authority over the child (a wrapper it
// launched, on this host, provably alive), opens a handle on the wrapper
// and checks its identity again once the handle is open (internal/wrapsig),
// records the request in the journal (source lcwrap-cancel), and only then
// sends SIGTERM through the handle, so a recycled pid is never hit. When
// the signal does not arrive, it records that too. Every refusal comes
// before anything is sent, and says which step refused.
//
// # What it refuses to claim
//
// A delivered SIGTERM is a request: the wrapper treats it as a cancel
// request for the whole job, and only the child's terminal event, read
// from the journal (Sent.Wait), says how it ended. An adopted or external
// child is never signalled: lcwrap only observes it. Authority is a
// statement about one moment, and never exists for an adopted process.
// See docs/design.md.
package cancel
