// Package journal is lcwrap's append-only, lock-protected JSONL store,
// line-compatible with the contract's reference writer, so that lcwrap and
// other cooperating writers can share one file.
//
// # Format
//
// Each line is one schema-v1 event with ,"journalSequence":n spliced in
// before its closing brace, n being the line's 1-based position. A journal
// written by another cooperating writer in that format is continued where
// it ends.
//
// # Lock
//
// Writers exclude one another with the directory <journal>.lock, which
// appears atomically with owner.json inside: {"pid", "token", "createdAt"
// (unix ms)} plus lcwrap's "startTime", "bootId" and "host". A reference
// writer makes it with mkdir; lcwrap, on Linux, keeps a prepared directory
// <journal>.lock.idle-<hex> per writer, rewrites its owner record and
// renames it into place with renameat2(RENAME_NOREPLACE), which fails
// exactly when mkdir would (elsewhere it uses mkdir). Within a process,
// every Open of a path shares one Journal and its mutex, so calls
// serialize in memory first. Acquisition retries with jittered
// exponential backoff (20µs up to 2ms) until Options.LockTimeout, then
// fails with a *LockTimeoutError naming the owner. A lock is reclaimed
// only when it is older than Options.StaleAfter (the younger of its
// directory's mtime and createdAt) AND its owner is demonstrably dead on
// this host: no process has the pid, the pid's start time differs, it is
// a zombie, or the host rebooted (internal/procid). An owner that is
// alive, stopped, not inspectable, on another host, or recorded without a
// start time while its pid exists is never robbed. A lock directory
// without a usable owner.json (missing or not a record with pid and
// token: its writer died between mkdir and writing it, which takes
// microseconds) is reclaimed once it is older than the stale age; one
// whose owner.json cannot be read is not. Reclaiming renames the
// directory aside first, then checks that the moved directory is still
// the stale one it judged (same token, still old) before removing it; if
// it is not, it is put back. Release removes (or renames back) the lock
// only when owner.json still holds our token. Prepared directories of dead
// writers are removed by the next writer, judged like a stale lock.
// Nothing is followed through a symlink: the journal, owner.json, the
// checkpoint and quarantine files are opened with O_NOFOLLOW, and a
// symlink at the lock path is an error.
//
// # Integrity
//
// A writer appends only after a valid prefix: a line that is malformed,
// oversized (over 64 KiB), invalid UTF-8, not a valid schema-v1 event,
// unfinished (no final newline, once no writer holds the lock) or
// non-monotonic (journalSequence missing or not its position) makes the
// journal append-blocked: Append returns a *BlockedError naming line and
// byte offset and writes nothing. Readers still see the valid prefix.
// Nothing is ever rewritten in place; Repair moves the bad tail into a
// quarantine file, byte for byte, and truncates the journal to its valid
// prefix.
//
// # Cost
//
// A Journal remembers where its verified prefix ends, how many lines it
// holds and its last line. Each Append verifies only what was appended
// since, mostly before taking the lock, and re-reads its remembered last
// line (one pread) to notice a file that was truncated and regrown. The
// checkpoint <journal>.checkpoint records the prefix for fresh processes;
// it is used only when the file still has, at the recorded offset, a line
// with the recorded SHA-256 ending exactly at the recorded size, valid and
// numbered as recorded. Otherwise the prefix is rebuilt by reading the
// file. Verify and Repair always read everything.
//
// # What it refuses to claim
//
// The lock is advisory: programs that ignore the protocol, and file systems
// without atomic mkdir and rename, are unsupported. A checkpoint vouches
// for the prefix it covers without re-reading it: damage inside that prefix
// is found by Verify, not by Append. A journal line is a record that an
// event was written, not that what it says is true.
package journal
