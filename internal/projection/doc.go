// Package projection is the reading side, and only reads: it turns a
// stream of schema-v1 events into the current picture of every child,
// applying the contract's projection rules 2–6 and 8, checks the recorded
// identities of that picture against the process table, and answers the
// adapter interface's getSnapshot. It never appends to a journal: what a
// check proves is recorded by internal/reconcile, and a cancel is decided
// and recorded by internal/cancel.
// Rule 1 binds writers (one childId per lifecycle); for rule 7 a child whose
// events may be missing is shown as provisional, since a reader of a
// journal has no snapshot source of its own to ask.
//
// # The state machine
//
// Projection.Apply takes one valid event at a time; memory grows with the
// number of children, not of events. Each event gets one Result:
//
//   - Applied: new and in order.
//   - Gap: projected, but earlier sequences of its space are missing; the
//     child is provisional until they arrive.
//   - OutOfOrder: older than the highest sequence of its space; it fills a
//     gap. Its state counts only when its space has set no later state, so
//     a shuffled stream ends where the ordered one does.
//   - Duplicate: the identity (source, sourceEpoch, childId, sequence), or
//     for an event without a sequence its eventId with a byte-identical
//     record, was seen before. The record is compared by hash, never kept.
//   - Conflict: the same identity with a different record; the first wins.
//   - IllegalTransition: not an edge of the table below; the state is kept.
//   - TerminalImmutable: the child already ended; the state is kept.
//
// The legal edges are one table (Transition): created → starting |
// cancelled | failed | lost; starting → running | waiting | cancelled |
// failed | lost; running ↔ waiting; running | waiting → completed | failed
// | cancelled | lost. Terminal states have no way out. Across a gap in its
// own space an event needs only a path through the table (Reachable): the
// missing events may hold the steps. A sequence space is (source,
// sourceEpoch, childId); a new sourceEpoch starts a new one, so a
// restarted writer reusing sequence 1 is not a duplicate. A child's events
// may come from several spaces (its wrapper, a reconciler, a hook); they
// share the child by childId.
//
// Kinds: created records the lifecycle source, command, heartbeat interval
// and identities (docs/events.md); state_changed and terminal move the
// state; a terminal event ends the child and records its exit; a
// reconciliation event carrying a state is a correction, applied to a
// non-terminal child whatever the table says; activity and heartbeat
// update only their own fields (the newest by observedAt wins); diagnostic
// events never change state (they carry omission counts). A child first
// seen after its created event (a stream joined mid-way) is kept, marked
// provisional, state unknown until an event says.
//
// Replaying a stream gives the same projection whatever the order and
// however often events repeat, as long as each sequence space is a legal
// path on its own and each child has at most one terminal event. "The
// same" means Report at the same moment is equal in every field except the
// result counts (a repeat is counted as a duplicate, by design): state,
// flags, lineage, capabilities, command, newest activity, last heartbeat,
// latest evidence, exit and end of every child. Which of two conflicting
// records, or of two terminal events from different sources, wins depends
// on arrival order: the first one seen.
//
// # Freshness and loss
//
// A non-terminal child is stale when its source declared a heartbeat
// (capability known, heartbeatIntervalMs > 0 in created) and nothing came
// from that source (the created event's source and epoch) for StaleAfter ×
// the interval, or when complete snapshots left it out grace times in a
// row. Stale is a flag, never a state. Tracker.FindLost checks the
// recorded identity of each stale child — the wrapper for a launched
// child, the process for an adopted one — with event.CheckIdentity, and
// of every child with no heartbeat to go stale by (an adopted PID-only
// child: if its observer, lcwrap adopt, dies first, this is the only way
// its end is found). Only a gone answer can make a child lost, and only
// internal/reconcile records it; alive and unknown (another host, no start
// time, nothing recorded) change nothing. For a launched child whose
// wrapper is gone, the finding says whether the child's own process is
// still present, so it can be adopted.
//
// # Snapshots
//
// PlanSnapshot compares a complete snapshot with the projection and
// changes nothing: the corrections of non-terminal children, the refusals
// of terminal ones, the omissions of covered non-terminal children
// (counted across processes from the diagnostic events that recorded the
// earlier misses; only grace consecutive complete misses make a child
// stale, intent stale-unknown, and a child listed again resets its
// count), the children it names that no event has shown. It refuses a
// snapshot that is not complete (ErrIncomplete).
//
// Tracker.BuildSnapshot is the other direction: lcwrap's own
// AuthoritativeSnapshot of a journal, every non-terminal child checked
// now as FindLost checks it (alive keeps its state, gone is reported
// lost). It declares complete coverage only when every such child got a
// definite answer and the journal is not blocked; otherwise it is
// incomplete and its coverage lists exactly the children it lists, and it
// names the others with the reason.
//
// Tracker.Lookup gives a writer what the events recorded about one child
// (its lineage, capabilities, state and wrapper), and Tracker.WaitEnded
// follows the journal until a child's terminal event.
//
// # What it refuses to claim
//
// The projection reports what events say, not what is true: a valid event
// may lie, and a missing one leaves the picture provisional, never filled
// in by guesswork. Heartbeats prove liveness, not progress. An exit code is
// how a process ended, never whether its task succeeded. A PID-only child
// is observed, never running. Omission never makes a child lost, and a
// child on another host is never declared lost from here. A snapshot
// vouches for liveness and recorded state at one moment, not for progress;
// an incomplete one never claims coverage it lacks.
//
// Where it sits among the other packages: docs/design.md.
package projection
