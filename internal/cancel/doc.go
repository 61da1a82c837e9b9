// Package cancel is the protocol of lcwrap cancel: authority first, then a
// record, then the signal, so that nothing is sent that the journal does
// not show and nothing is sent without verified authority.
//
// # What it promises
//
// Send reads the journal, asks the projection whether lcwrap holds
// authority over the child (a wrapper it launched, on this host, provably
// alive: projection.CancelAuthority), opens a handle on the wrapper and
// checks its identity again once the handle is open (internal/wrapsig),
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
// child is never signalled: lcwrap only observes it. See docs/design.md.
package cancel
