package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"encoding/json"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
)

// FsyncMode says when appends are flushed to stable storage.
type FsyncMode int

// The --fsync modes.
const (
	FsyncTerminal FsyncMode = iota // after batches holding a terminal event (default)
	FsyncAlways                    // after every append
	FsyncNever                     // leave it to the kernel
)

// ParseFsync parses always|terminal|never.
func ParseFsync(s string) (FsyncMode, error) {
	switch s {
	case "terminal", "":
		return FsyncTerminal, nil
	case "always":
		return FsyncAlways, nil
	case "never":
		return FsyncNever, nil
	}
	return 0, fmt.Errorf("%q: use always, terminal or never", s)
}

// Defaults of Options.
const (
	DefaultLockTimeout = 5 * time.Second
	DefaultStaleAfter  = 30 * time.Second
)

// Options configures a Journal. Zero values mean the defaults.
type Options struct {
	LockTimeout time.Duration // default 5s
	StaleAfter  time.Duration // default 30s
	Fsync       FsyncMode
	// MaxLineBytes caps a line, journalSequence included (default and
	// maximum linereader.DefaultMaxBytes: readers refuse longer lines).
	MaxLineBytes int
	// MaxBytes seals the live file and starts a new one when an append
	// would take it past this size (0: never). Refused, silently, on a
	// journal where a writer without the kernel lock was seen: reference
	// writers know only the live file.
	MaxBytes int64
	// Group lets one group read the journal (a log shipper running as
	// another user): a group name or gid; "" means $LCWRAP_JOURNAL_GROUP,
	// and none when that is unset. See EnvGroup.
	Group string
}

func (o Options) withDefaults() (Options, error) {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = linereader.DefaultMaxBytes
	}
	if o.MaxLineBytes > linereader.DefaultMaxBytes {
		return o, fmt.Errorf("journal line cap %d is over %d bytes, the cap every reader applies", o.MaxLineBytes, linereader.DefaultMaxBytes)
	}
	return o, nil
}

// EnvPath is the environment variable that names the default journal
// (lcwrap run sets it for the child, so that an lcwrap inside writes to
// the same journal).
const EnvPath = "LCWRAP_JOURNAL"

// DefaultPath resolves the default journal: $LCWRAP_JOURNAL, else
// $XDG_STATE_HOME/lcwrap/journal.jsonl, else ~/.local/state/lcwrap/journal.jsonl.
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		return p, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "lcwrap", "journal.jsonl"), nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no journal path: set %s, XDG_STATE_HOME or HOME: %w", EnvPath, err)
		}
	}
	return filepath.Join(home, ".local", "state", "lcwrap", "journal.jsonl"), nil
}

// checkpointEvery is how many newly verified lines make Append refresh the
// checkpoint.
const checkpointEvery = 1024

// checkpointOnClose is how many lines verified since the checkpoint make
// Close refresh it. A short run appends a handful of lines: refreshing on
// every close would cost each run a lock cycle and a file rename, while
// leaving up to this many lines for the next process to verify costs it
// well under a millisecond. (A variable for tests.)
var checkpointOnClose int64 = 64

// checkpointOnSync is how many lines verified since the checkpoint make an
// append that asks for a sync (a run's terminal batch, usually its last),
// or a process's first append, refresh it inside the same lock hold: a
// fresh process then verifies about this many lines past the checkpoint
// at most (about 3 µs each), and nobody pays an extra lock cycle for it.
const checkpointOnSync = 16

// closeLockBudget bounds how long Close waits for the lock to save the
// checkpoint; the checkpoint only saves work, so a busy lock skips it.
const closeLockBudget = 200 * time.Millisecond

// Journal is the process-wide writer of one journal file. Every Open of a
// path returns the same Journal; it is closed by the last Close.
type Journal struct {
	path  string
	opts  Options
	group int // the read group's gid (Options.Group), -1 for none
	lock  *locker
	ckpt  string // <journal>.checkpoint

	mu   sync.Mutex
	refs int
	f    *os.File // O_RDWR|O_APPEND

	// The verified prefix of the live file: [0, cur.off) holds lines up to
	// journalSequence cur.pos, all valid or quarantined; the last one, at
	// cur.lastOff, is remembered to detect a rewritten file.
	loaded  bool // the checkpoint was consulted
	cur     cursor
	unsaved int64 // lines verified since the checkpoint was read or written
	foreign bool  // a writer without the kernel lock was seen (cached)
	// appended is set after the first append: a process's first append
	// (often its only one, as for lcwrap emit) refreshes the checkpoint in
	// its own lock hold when it had many lines to verify.
	appended bool
}

var (
	registryMu sync.Mutex
	registry   map[string]*Journal // made by the first Open
)

// Open returns the writer for path, creating the directory (0700) and the
// file (0600) when missing. Calls for the same path share one writer (with
// the first caller's options) until each has called Close. Open reads no
// content: the first Append checks it.
//
// Outcomes: the Journal and nil; an *fs.PathError wrapping ErrSymlink when
// the journal path is a symlink; an *UnsafeError (ErrUnsafe) when the
// journal belongs to another user or others may write it; an error for a
// line cap above the readers' cap, an unknown read group, a path that is
// not a regular file, or one that cannot be created.
func Open(path string, opts Options) (*Journal, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if j, ok := registry[abs]; ok {
		j.mu.Lock()
		j.refs++
		j.mu.Unlock()
		return j, nil
	}
	group, err := readGroup(opts.Group)
	if err != nil {
		return nil, err
	}
	f, err := openJournalFile(abs, group)
	if err != nil {
		return nil, err
	}
	j := &Journal{
		path:  abs,
		opts:  opts,
		group: group,
		lock:  &locker{dir: abs + ".lock", stale: opts.StaleAfter, table: event.System},
		ckpt:  abs + ".checkpoint",
		refs:  1,
		f:     f,
	}
	j.reset()
	j.lock.onForeign = j.markForeign
	if registry == nil {
		registry = map[string]*Journal{}
	}
	registry[abs] = j
	return j, nil
}

// openJournalFile opens (creating it when missing) the journal for reading
// and appending, never through a symlink, and refuses one that is not
// the writing user's or that others can write (ErrUnsafe). With a read
// group (Options.Group), the file gets that group and group read.
func openJournalFile(path string, group int) (*os.File, error) {
	const flags = os.O_RDWR | os.O_APPEND | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	for {
		f, err := openFile(path, flags, 0)
		if errors.Is(err, fs.ErrNotExist) {
			dir := filepath.Dir(path)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("journal directory: %w", err)
			}
			f, err = openFile(path, flags|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue // created by someone else meanwhile
			}
			if err == nil {
				syncDir(dir)
			}
		}
		if err != nil {
			return nil, journalPathError("open journal", path, err)
		}
		f, fi, err := regularOnlyInfo(f, path)
		if err != nil {
			return nil, err
		}
		if ue := checkSafe(path, "journal", fi, true); ue != nil {
			f.Close()
			return nil, ue
		}
		if group >= 0 {
			shareFile(f, fi, group)
			shareDir(filepath.Dir(path), group)
		}
		return f, nil
	}
}

// regularOnly returns f when it is a regular file, and otherwise closes
// it and answers ErrNotRegular: a FIFO or a device never reaches a reader
// or a writer, which would block on it or read it forever.
func regularOnly(f *os.File, path string) (*os.File, error) {
	f, _, err := regularOnlyInfo(f, path)
	return f, err
}

// regularOnlyInfo is regularOnly that also returns the file's FileInfo.
func regularOnlyInfo(f *os.File, path string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open journal", Path: path, Err: ErrNotRegular}
	}
	return f, fi, nil
}

// openFile opens a regular file with open(2) and wraps the descriptor
// without registering it with the runtime's poller (os.OpenFile tries,
// which costs several system calls per file on the start-up path; regular
// files are never pollable). O_NONBLOCK only keeps the open itself from
// blocking on a FIFO: it is cleared again, and the caller checks the type.
func openFile(path string, flags int, perm uint32) (*os.File, error) {
	fd, err := syscall.Open(path, flags, perm)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if flags&syscall.O_NONBLOCK != 0 {
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// journalPathError turns ELOOP from O_NOFOLLOW into ErrSymlink.
func journalPathError(op, path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return &fs.PathError{Op: op, Path: path, Err: ErrSymlink}
	}
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Path returns the journal's absolute path.
func (j *Journal) Path() string { return j.path }

// Append writes lines (encoded events, a trailing newline allowed, without
// journalSequence) with consecutive journalSequence numbers and returns the
// first one. The batch is written with one write under the lock. sync asks
// for an fsync afterwards; the fsync mode decides (always: every append;
// terminal: when sync is true; never).
//
// Outcomes: the first journalSequence and nil; an error wrapping
// ErrInvalidLine or ErrLineTooLong (nothing written); a *BlockedError
// (ErrBlocked) when the journal holds bad content (nothing written); a
// *LockTimeoutError (ErrLockTimeout); an error wrapping ErrUnsafe (and
// ErrSymlink for a symlink) for a journal, checkpoint, kernel lock, lock
// directory or next sealed name that is a symlink, another user's, or
// writable by others; an error wrapping ErrHardLinked for a journal with
// another name; ErrClosed; an error wrapping ErrUncertain, with the first
// journalSequence, when the lines were written but whether they stand is
// unknown (the lock was found another writer's at release, the sync
// failed, or a write stopped after whole lines): a caller must not simply
// retry; an I/O error when nothing was written (a partial line is left
// for the next writer to quarantine, never cut back).
func (j *Journal) Append(lines [][]byte, sync bool) (int64, error) {
	return j.appendChecked(lines, sync, eventLine)
}

// AppendBuilt is Append for lines an emitter built from events it has
// validated already (the sinks of emit: each line is the encoding of an
// event that passed event.Validate). It checks only what the journal's
// own encoding needs, that each is one line holding a JSON object, and
// does not parse and validate the event a second time: the caller vouches
// for it. Lines from anywhere else (a file, a hook's state, another
// program) go through Append.
//
// Outcomes: those of Append.
func (j *Journal) AppendBuilt(lines [][]byte, sync bool) (int64, error) {
	return j.appendChecked(lines, sync, builtLine)
}

func (j *Journal) appendChecked(lines [][]byte, sync bool, check func([]byte) ([]byte, error)) (int64, error) {
	if len(lines) == 0 {
		return 0, fmt.Errorf("%w: empty batch", ErrInvalidLine)
	}
	events := make([][]byte, len(lines))
	for i, l := range lines {
		b, err := check(l)
		if err != nil {
			return 0, fmt.Errorf("journal: line %d of %d: %w", i+1, len(lines), err)
		}
		events[i] = b
	}
	return j.append(sync, func() ([][]byte, error) { return events, nil })
}

// Ready checks that the journal takes appends now: it takes the lock
// (healing a dead writer's torn tail like Append) and releases it,
// appending nothing.
//
// Outcomes: nil; those of Append (a *LockTimeoutError, a *BlockedError,
// ...).
func (j *Journal) Ready() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.refs == 0 {
		return ErrClosed
	}
	if err := j.catchUp(false); err != nil {
		return err
	}
	_, err := j.appendLocked(false, func() ([][]byte, error) { return nil, errReady })
	if errors.Is(err, errReady) {
		return nil
	}
	return err
}

var errReady = errors.New("ready")

// Key names one sequence space: (source, sourceEpoch, childId).
type Key struct {
	Source, SourceEpoch, ChildID string
}

// AppendNext reserves the next sequence of key and appends the line build
// makes for it, under one lock acquisition. The next sequence is one more
// than the sequence of the key's most recent event, found by reading the
// journal backwards from its end (for a key the journal has never seen,
// that reads the whole file); 1 when there is none.
//
// Outcomes: those of Append, plus build's error as it is (nothing written).
func (j *Journal) AppendNext(key Key, build func(seq int64) ([]byte, error), sync bool) (int64, error) {
	return j.append(sync, func() ([][]byte, error) {
		last, err := j.lastSequence(key)
		if err != nil {
			return nil, err
		}
		line, err := build(last + 1)
		if err != nil {
			return nil, err
		}
		b, err := eventLine(line)
		if err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		return [][]byte{b}, nil
	})
}

// eventLine checks one line handed to Append and returns it trimmed.
func eventLine(l []byte) ([]byte, error) {
	b := bytes.TrimSpace(l)
	if bytes.IndexByte(b, '\n') >= 0 {
		return nil, fmt.Errorf("%w: it spans several lines", ErrInvalidLine)
	}
	_, js, err := event.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidLine, err)
	}
	if js != 0 {
		return nil, fmt.Errorf("%w: it already carries a journalSequence", ErrInvalidLine)
	}
	return b, nil
}

// builtLine checks one line handed to AppendBuilt: one line, a JSON
// object (the journal adds its journalSequence before the closing brace).
func builtLine(l []byte) ([]byte, error) {
	b := bytes.TrimSpace(l)
	switch {
	case bytes.IndexByte(b, '\n') >= 0:
		return nil, fmt.Errorf("%w: it spans several lines", ErrInvalidLine)
	case len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}':
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidLine)
	}
	return b, nil
}

// append runs one locked append: it brings the verified prefix up to the
// end of the file, asks prepare for the lines, and writes them.
func (j *Journal) append(sync bool, prepare func() ([][]byte, error)) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.refs == 0 {
		return 0, ErrClosed
	}
	// Verify what others appended before taking the lock, so the lock is
	// held only for the few lines appended meanwhile.
	if err := j.catchUp(false); err != nil {
		return 0, err
	}
	first, err := j.appendLocked(sync, prepare)
	if err != nil {
		if errors.Is(err, ErrUncertain) {
			return first, err
		}
		return 0, err
	}
	if j.opts.Fsync == FsyncAlways || (sync && j.opts.Fsync == FsyncTerminal) {
		// fdatasync: the appended bytes and the file size, without the
		// timestamps fsync would also flush.
		if err := datasync(j.f); err != nil {
			return first, fmt.Errorf("%w: journal %s: the lines from journalSequence %d were written, but not made durable: fsync: %w", ErrUncertain, j.path, first, err)
		}
	}
	return first, nil
}

func (j *Journal) appendLocked(sync bool, prepare func() ([][]byte, error)) (first int64, err error) {
	tok, err := j.lock.acquire(j.opts.LockTimeout)
	if err != nil {
		return 0, err
	}
	defer func() {
		rerr := j.lock.release(tok)
		switch {
		case rerr == nil || err != nil:
		case first > 0:
			// The lines are in the file; a writer that took the lock
			// meanwhile may have written others at the same positions.
			err = fmt.Errorf("%w: journal %s: the lines from journalSequence %d were written whole, but %w", ErrUncertain, j.path, first, rerr)
		default:
			err = rerr
		}
	}()
	var be *BlockedError
	if err := j.catchUp(true); err != nil && (!errors.As(err, &be) || be.Class != event.ClassTruncated) {
		return 0, err
	}
	if err := j.checkFile(true); err != nil {
		return 0, err
	}
	if be != nil {
		// Under the lock, a final line without newline is the fragment of
		// a writer that died inside write(2): quarantine it in place.
		if _, err := j.quarantineRange(be, "heal"); err != nil {
			return 0, err
		}
	}
	events, err := prepare()
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	lastStart, err := j.encode(&buf, events, j.cur.pos+1)
	if err != nil {
		return 0, err
	}
	if j.opts.MaxBytes > 0 && j.cur.off > 0 && j.cur.off+int64(buf.Len()) > j.opts.MaxBytes && !j.foreignSeen() {
		if err := j.rotate(); err != nil {
			return 0, err
		}
		buf.Reset()
		if lastStart, err = j.encode(&buf, events, j.cur.pos+1); err != nil {
			return 0, err
		}
	}
	first = j.cur.pos + 1
	if err := j.write(buf.Bytes(), lastStart, int64(len(events))); err != nil {
		return 0, err
	}
	j.unsaved += int64(len(events))
	if j.unsaved >= checkpointEvery || (sync || !j.appended) && j.unsaved >= checkpointOnSync {
		j.saveCheckpoint()
	}
	j.appended = true
	return first, nil
}

// checkFile makes sure, under the lock, that the live file is still one a
// writer may write: the writing user's (or root's) and writable by nobody
// else (ErrUnsafe); and, with links, its only name (ErrHardLinked), unless
// the other name is the sealed name that a rotation killed between its two
// steps left. The lock is taken by name: writers through another name of
// the same file would not be excluded, and after a rotation through one
// name the other would append into a sealed file.
func (j *Journal) checkFile(links bool) error {
	fi, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if ue := checkSafe(j.path, "journal", fi, true); ue != nil {
		return ue
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !links || !ok || st.Nlink <= 1 {
		return nil
	}
	if st.Nlink == 2 {
		if sfi, err := os.Lstat(sealedName(j.path, peekBase(j.f)+1)); err == nil && os.SameFile(sfi, fi) {
			return nil
		}
	}
	return fmt.Errorf("%w: journal %s has %d names (hard links) and lcwrap locks a journal by its name, so writers through another name would append at the same time; refusing to write: remove the other name (find / -xdev -samefile %s lists them) or write through it alone",
		ErrHardLinked, j.path, st.Nlink, shellQuote(j.path))
}

// encode writes events to buf numbered from first and returns the offset
// of the last one in buf.
func (j *Journal) encode(buf *bytes.Buffer, events [][]byte, first int64) (int, error) {
	lastStart := 0
	for i, b := range events {
		lastStart = buf.Len()
		buf.Write(b[:len(b)-1])
		buf.WriteString(`,"journalSequence":`)
		buf.WriteString(strconv.FormatInt(first+int64(i), 10))
		buf.WriteString("}\n")
		if n := buf.Len() - lastStart - 1; n > j.opts.MaxLineBytes {
			return 0, fmt.Errorf("journal: line %d of %d: %w: %d bytes with its journalSequence, cap %d", i+1, len(events), ErrLineTooLong, n, j.opts.MaxLineBytes)
		}
	}
	return lastStart, nil
}

// write appends b (n whole lines, the last at lastStart) with one write
// and moves the verified prefix past it.
func (j *Journal) write(b []byte, lastStart int, n int64) error {
	if k, err := j.f.Write(b); err != nil {
		// Nothing is cut back (a follower may have read the lines written
		// whole): the lines written whole are in the journal, and a final
		// partial line is healed by the next lock holder like any torn
		// write.
		if whole := int64(bytes.Count(b[:max(k, 0)], []byte{'\n'})); whole > 0 {
			// Those lines are in the journal: the append is neither done
			// nor undone.
			return fmt.Errorf("%w: journal %s: the write stopped after %d of %d bytes: %d of %d lines were written whole and stay in the journal; a partial last line is quarantined by the next writer: %w", ErrUncertain, j.path, k, len(b), whole, n, err)
		}
		if k > 0 {
			return fmt.Errorf("journal %s: the write stopped after %d of %d bytes, inside the first line, which the next writer quarantines: nothing was written: %w", j.path, k, len(b), err)
		}
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.cur.lastOff = j.cur.off + int64(lastStart)
	j.cur.last = append(j.cur.last[:0], b[lastStart:len(b)-1]...)
	j.cur.off += int64(len(b))
	j.cur.pos += n
	return nil
}

// Close releases this caller's share of the writer. The last Close saves
// the checkpoint (when the lock is free within a short budget) and closes
// the file.
//
// Outcomes: nil; ErrClosed when every Open has been closed already; the
// error of closing the file.
func (j *Journal) Close() error {
	registryMu.Lock()
	defer registryMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.refs == 0 {
		return ErrClosed
	}
	j.refs--
	if j.refs > 0 {
		return nil
	}
	delete(registry, j.path)
	if j.unsaved >= checkpointOnClose {
		if tok, err := j.lock.acquire(min(closeLockBudget, j.opts.LockTimeout)); err == nil {
			j.catchUp(true) // a blocked journal still has a valid prefix to record
			j.saveCheckpoint()
			j.lock.release(tok)
		}
	}
	j.lock.close()
	return j.f.Close()
}

// reset forgets the verified prefix.
func (j *Journal) reset() {
	j.cur = cursor{path: j.path, f: j.f, keepLast: true, last: j.cur.last[:0]}
}

// catchUp extends the verified prefix to the end of the file. It first
// makes sure the file is still the one it verified: the same inode at the
// path, at least as long, with the remembered last line in place;
// otherwise it starts over. Without the lock a final line without newline
// may be a write in progress and is left for later; under the lock it is a
// torn write.
//
// Outcomes: nil; a *BlockedError at the first bad line; an *fs.PathError
// wrapping ErrSymlink; an I/O error.
func (j *Journal) catchUp(locked bool) error {
	if !j.loaded {
		if err := j.loadCheckpoint(); err != nil {
			return err
		}
		j.loaded = true
	}
	if err := j.reopenIfReplaced(); err != nil {
		return err
	}
	size, err := fileSize(j.f)
	if err != nil {
		return err
	}
	if size < j.cur.off || !j.lastLineInPlace() {
		j.reset()
	}
	if size == j.cur.off {
		return nil
	}
	before := j.cur.pos
	err = j.cur.run(size, locked, j.opts.MaxLineBytes, nil)
	j.unsaved += j.cur.pos - before
	if be := (*BlockedError)(nil); errors.As(err, &be) {
		return be
	}
	return err
}

// reopenIfReplaced reopens the journal when the path names another file
// than the one open (it was moved away, deleted or replaced); a symlink
// there is refused by the reopening.
func (j *Journal) reopenIfReplaced() error {
	pfi, err := os.Lstat(j.path)
	if err == nil {
		ffi, ferr := j.f.Stat()
		if ferr == nil && os.SameFile(pfi, ffi) {
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := openJournalFile(j.path, j.group)
	if err != nil {
		return err
	}
	j.f.Close()
	j.f = f
	j.reset()
	return nil
}

// markForeign records, beside the journal, that a writer without the
// kernel lock (a reference writer, an older lcwrap) holds the lock
// directory: rotation is refused on this journal from now on.
func (j *Journal) markForeign(o owner) {
	if j.foreign {
		return
	}
	j.foreign = true
	name := j.path + ".lock.foreign"
	if _, err := os.Lstat(name); err == nil {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"seenAt": time.Now().UTC().Format(time.RFC3339Nano), "owner": o})
	f.Write(append(b, '\n'))
	f.Close()
}

// foreignSeen reports whether a writer without the kernel lock was ever
// seen on this journal (by any lcwrap process).
func (j *Journal) foreignSeen() bool {
	if !j.foreign {
		if _, err := os.Lstat(j.path + ".lock.foreign"); err == nil {
			j.foreign = true
		}
	}
	return j.foreign
}

// lastLineInPlace reports whether the remembered last line is still where
// it was: one pread, so a truncate-and-regrow is noticed cheaply.
func (j *Journal) lastLineInPlace() bool {
	if j.cur.off == 0 {
		return true
	}
	b := make([]byte, j.cur.off-j.cur.lastOff)
	if _, err := j.f.ReadAt(b, j.cur.lastOff); err != nil {
		return false
	}
	return b[len(b)-1] == '\n' && bytes.Equal(b[:len(b)-1], j.cur.last)
}
