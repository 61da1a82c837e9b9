// Package reconcile is the one writer that corrects: it appends to a
// journal what reading it, and checking it against the world, proves.
//
// # What it promises
//
// Reconciler.Lost appends a terminal lost event (source lcwrap-reconcile,
// exit status unknown, the identity checked and why) only for a child whose
// lifecycle source projection.Tracker.FindLost found provably gone, and
// only after reading the journal again to its end, so a child that ended
// meanwhile is left alone. Reconciler.Snapshot applies a complete
// snapshot as projection.PlanSnapshot plans it: a reconciliation event
// (before, after, snapshotId, snapshotSource, snapshotEpoch) for each
// correction of a non-terminal child, and a diagnostic event for each
// omission counted or reset, so misses persist across processes.
// Overlapping calls in one process coalesce (x/sync/singleflight).
// Nothing is appended to a blocked journal.
//
// Writer is the append path it shares with internal/cancel's recorder:
// the events of one source, with a sourceEpoch of its own and the child's
// recorded lineage and capabilities, in one journal append; after a failed
// append it moves to a new sourceEpoch, so no sequence is used twice.
//
// # What it refuses to claim
//
// A lost event says the lifecycle source is gone, never how the task
// ended: its exit status is unknown. Alive, unknown, another host or no
// recorded identity never make a child lost, and omission alone never
// does: it makes a child stale, its state unknown. A terminal child is
// never corrected, an incomplete snapshot never applied, and a child no
// event has shown never invented.
package reconcile
