package journal

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrBlocked means the journal holds bad content no quarantine record
	// covers: nothing is appended until `lcwrap journal repair`
	// quarantines it.
	ErrBlocked = errors.New("journal is append-blocked")
	// ErrLockTimeout means the lock stayed held, by an owner that is alive
	// or not provably dead, for the whole lock timeout.
	ErrLockTimeout = errors.New("timed out waiting for the journal lock")
	// ErrLockLost means the lock directory no longer holds our token when
	// we release it; nothing was removed.
	ErrLockLost = errors.New("journal lock is no longer ours")
	// ErrSymlink means a symlink sits where the journal, its lock or its
	// checkpoint belongs; lcwrap never follows one.
	ErrSymlink = errors.New("refusing to follow a symlink")
	// ErrNotRegular means the journal path names something other than a
	// regular file (a FIFO, a device, a directory); lcwrap reads and
	// writes only regular files.
	ErrNotRegular = errors.New("not a regular file")
	// ErrInvalidLine means a line handed to Append is not one valid event
	// without a journalSequence, so the journal would refuse it later.
	ErrInvalidLine = errors.New("not a valid event line")
	// ErrLineTooLong means a line would exceed the journal's line cap.
	ErrLineTooLong = errors.New("line longer than the journal's line cap")
	// ErrUncertain means the lines were written, but whether they stand
	// is unknown: the lock turned out to be another writer's when it was
	// released (a writer without the kernel lock may have appended at the
	// same positions), the sync failed, or a write stopped after whole
	// lines. Retrying may write them twice.
	ErrUncertain = errors.New("unknown whether written")
	// ErrClosed means the Journal was used after its last Close.
	ErrClosed = errors.New("journal is closed")
)

// LockTimeoutError says who held the lock and why it was not reclaimed.
type LockTimeoutError struct {
	Lock   string        // the lock directory
	Waited time.Duration // how long acquisition tried
	Owner  string        // the owner record as read, "" when unreadable
	Why    string        // why the lock was not reclaimed
}

func (e *LockTimeoutError) Error() string {
	owner := "an owner whose owner.json cannot be read"
	if e.Owner != "" {
		owner = e.Owner
	}
	return fmt.Sprintf("%v: %s still held after %v by %s; not reclaimed: %s",
		ErrLockTimeout, e.Lock, e.Waited.Round(time.Millisecond), owner, e.Why)
}

// Unwrap returns ErrLockTimeout.
func (e *LockTimeoutError) Unwrap() error { return ErrLockTimeout }
