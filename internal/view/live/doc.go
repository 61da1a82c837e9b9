// Package live keeps a view.Model current from a journal: it follows the
// journal from the model's cursor in a goroutine of its own (inotify where
// the directory can be watched, a slowing poll where it cannot), signals
// each change and when it has caught up with what the journal held at the
// start, keeps the bad line the journal is blocked at, and reads a journal
// that was replaced or shrank again from its start into a new model.
//
// It is apart from the model because it is the only part of a live view
// that does I/O, keeps a goroutine and decides when to retry: the model,
// the table and the report stay pure, and the readers that draw once
// (lcwrap report, the status table) do not carry it.
//
// NewFleet follows a fleet instead (internal/fleet): the gateway
// Collector's output, looked at when an inotify watch of its directory
// says a file changed (at most every 100 ms; every 30 s regardless),
// polled where it cannot be watched (every 100 ms while records arrive,
// up to every second when quiet), new lines and new rotated files alike;
// each host's children keyed by (host, childId), judged on the host's
// clock, and stale while the host is silent (judged again after each
// look, and at the instant a host falls silent with nothing arriving).
//
// # What it refuses to claim
//
// It shows what the lines read so far say: a quiet journal is not a quiet
// world, and an error following the journal is kept and shown (State.Err),
// never taken to mean that nothing happened. A silent host is not a
// dead one: its open children are stale, never lost.
package live
