// Package journal is lcwrap's append-only, lock-protected JSONL store,
// line-compatible with the contract's reference writer, so that lcwrap and
// other cooperating writers can share one file. docs/journal.md has the
// protocol, the proof and the failure-mode table; this is the summary.
//
// # Format
//
// Each line is one schema-v1 event with ,"journalSequence":n spliced in
// before its closing brace, n being the line's position in the journal as
// a whole (across sealed files). A journal written by another cooperating
// writer in that format is continued where it ends.
//
// # Lock
//
// lcwrap writers take a flock on <journal>.lock.kernel (the kernel
// releases it when its holder dies, in any PID namespace), then the
// reference lock directory <journal>.lock with owner.json inside
// (protocol marker "lcwrap-kernel-lock/1", pidNs, startTime...). Under the
// kernel lock a directory whose record has the marker is abandoned and is
// reclaimed at once; any other owner is reclaimed only when older than the
// stale age and demonstrably dead on this host and in every PID namespace
// its pid may belong to: a pid this process cannot see is not a dead pid
// (a pid recorded without its namespace is judged only from the initial
// namespace, against every process's NSpid). A directory without a usable
// owner record is reclaimed after the stale age and at least 10 s.
// A reclaim swaps the judged directory with our own prepared one
// (renameat2 RENAME_EXCHANGE) and removes only the inode it judged. Two
// lcwrap writers never hold the lock at once; a foreign writer's own
// reclaim is bounded as docs/journal.md says. BreakLock breaks, for a
// person, a lock whose owner cannot be judged, by its token. Flock is
// lcwrap's one wait for an flock(2) (a jittered backoff to a deadline):
// the kernel lock's, and internal/agent's session store's.
//
// # Files someone else controls
//
// Writers refuse (ErrUnsafe) a journal, checkpoint, kernel lock, lock
// directory or next sealed name that is a symlink, another user's, or
// (files) writable by group or others, and a journal with another hard
// link (ErrHardLinked): the lock is taken by name. Readers may ask
// CheckTrust and warn. Options.Group ($LCWRAP_JOURNAL_GROUP) lets one
// group read the journal, never write it.
//
// # Integrity, never moving a byte
//
// A writer appends only after a valid prefix, and only valid events:
// Append parses and validates every line it is handed; AppendBuilt takes
// the lines of emit's sinks, validated once when they were built, and
// checks only their framing. A bad line that no
// quarantine record covers makes Append return a *BlockedError; readers
// still see what is before it. Nothing is ever truncated, rewritten or
// moved: Repair, and the next lock holder for a dead writer's torn final
// line, quarantine the bad range in place (terminated, copied to a
// quarantine file, named byte for byte by a control record appended after
// it), and every reader here skips exactly that range. Rotation
// (Options.MaxBytes) seals a file under a second name and starts the next;
// Read, FollowWith, Verify and friends read sealed files and the live one
// as one journal. A path that is not a regular file is refused.
//
// # Cost
//
// A Journal verifies only what was appended since it last looked; a
// checkpoint beside the journal, checked against the file before use,
// spares fresh processes reading everything. Verify and Repair read it all.
//
// # What it refuses to claim
//
// The lock is advisory: programs that ignore the protocol, and file systems
// without atomic mkdir and rename or a working flock, are unsupported. An
// append whose lines went in but whose lock was found another writer's at
// release answers ErrUncertain, never success nor "not written". A
// checkpoint vouches for the prefix it covers without re-reading it. A
// journal line is a record that an event was written, not that what it
// says is true.
package journal
