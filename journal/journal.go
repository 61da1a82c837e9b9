package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/procid"
	"github.com/lcwrap/lcwrap/jsonl"
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
	// maximum jsonl.DefaultMaxLineBytes: readers refuse longer lines).
	MaxLineBytes int
}

func (o Options) withDefaults() (Options, error) {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = jsonl.DefaultMaxLineBytes
	}
	if o.MaxLineBytes > jsonl.DefaultMaxLineBytes {
		return o, fmt.Errorf("journal line cap %d is over %d bytes, the cap every reader applies", o.MaxLineBytes, jsonl.DefaultMaxLineBytes)
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

// closeLockBudget bounds how long Close waits for the lock to save the
// checkpoint; the checkpoint only saves work, so a busy lock skips it.
const closeLockBudget = 200 * time.Millisecond

// Journal is the process-wide writer of one journal file. Every Open of a
// path returns the same Journal; it is closed by the last Close.
type Journal struct {
	path string
	opts Options
	lock *locker
	ckpt string // <journal>.checkpoint

	mu   sync.Mutex
	refs int
	f    *os.File // O_RDWR|O_APPEND

	// The verified prefix: [0, size) holds lines 1..lines, all valid; the
	// last one, at lastOff, is remembered to detect a rewritten file.
	loaded  bool // the checkpoint was consulted
	size    int64
	lines   int64
	last    []byte
	lastOff int64
	unsaved int64 // lines verified since the checkpoint was read or written
}

var (
	registryMu sync.Mutex
	registry   = map[string]*Journal{}
)

// Open returns the writer for path, creating the directory (0700) and the
// file (0600) when missing. Calls for the same path share one writer (with
// the first caller's options) until each has called Close. Open reads no
// content: the first Append checks it.
//
// Outcomes: the Journal and nil; an *fs.PathError wrapping ErrSymlink when
// the journal path is a symlink; an error for a line cap above the readers'
// cap, a path that is not a regular file, or one that cannot be created.
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
	f, err := openJournalFile(abs)
	if err != nil {
		return nil, err
	}
	j := &Journal{
		path: abs,
		opts: opts,
		lock: &locker{dir: abs + ".lock", stale: opts.StaleAfter, table: procid.System},
		ckpt: abs + ".checkpoint",
		refs: 1,
		f:    f,
	}
	registry[abs] = j
	return j, nil
}

// openJournalFile opens (creating it when missing) the journal for reading
// and appending, never through a symlink.
func openJournalFile(path string) (*os.File, error) {
	const flags = os.O_RDWR | os.O_APPEND | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	for {
		f, err := os.OpenFile(path, flags, 0)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("journal directory: %w", err)
			}
			f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue // created by someone else meanwhile
			}
			if err == nil {
				syncDir(filepath.Dir(path))
			}
		}
		if err != nil {
			return nil, journalPathError("open journal", path, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("journal %s is not a regular file", path)
		}
		return f, nil
	}
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
// *LockTimeoutError (ErrLockTimeout); an *fs.PathError wrapping ErrSymlink
// for a symlink at the journal, lock or checkpoint path; ErrClosed; an I/O
// error (a failed write is cut back to the end of the last line, so no torn
// line is left behind by this writer).
func (j *Journal) Append(lines [][]byte, sync bool) (int64, error) {
	if len(lines) == 0 {
		return 0, fmt.Errorf("%w: empty batch", ErrInvalidLine)
	}
	events := make([][]byte, len(lines))
	for i, l := range lines {
		b, err := eventLine(l)
		if err != nil {
			return 0, fmt.Errorf("journal: line %d of %d: %w", i+1, len(lines), err)
		}
		events[i] = b
	}
	return j.append(sync, func() ([][]byte, error) { return events, nil })
}

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
	_, js, err := jsonl.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidLine, err)
	}
	if js != 0 {
		return nil, fmt.Errorf("%w: it already carries a journalSequence", ErrInvalidLine)
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
	first, err := j.appendLocked(prepare)
	if err != nil {
		return 0, err
	}
	if j.opts.Fsync == FsyncAlways || (sync && j.opts.Fsync == FsyncTerminal) {
		if err := j.f.Sync(); err != nil {
			return first, fmt.Errorf("journal %s: fsync: %w", j.path, err)
		}
	}
	return first, nil
}

func (j *Journal) appendLocked(prepare func() ([][]byte, error)) (first int64, err error) {
	tok, err := j.lock.acquire(j.opts.LockTimeout)
	if err != nil {
		return 0, err
	}
	defer func() {
		if rerr := j.lock.release(tok); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := j.catchUp(true); err != nil {
		return 0, err
	}
	events, err := prepare()
	if err != nil {
		return 0, err
	}
	first = j.lines + 1
	var buf bytes.Buffer
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
	if n, err := j.f.Write(buf.Bytes()); err != nil {
		if n > 0 {
			// Our own bytes, never committed: cut them back so that no
			// torn line is left for others.
			j.f.Truncate(j.size)
		}
		return 0, fmt.Errorf("journal %s: %w", j.path, err)
	}
	b := buf.Bytes()
	j.lastOff = j.size + int64(lastStart)
	j.last = append(j.last[:0], b[lastStart:len(b)-1]...)
	j.size += int64(len(b))
	j.lines += int64(len(events))
	j.unsaved += int64(len(events))
	if j.unsaved >= checkpointEvery {
		j.saveCheckpoint()
	}
	return first, nil
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
	j.size, j.lines, j.lastOff, j.last = 0, 0, 0, j.last[:0]
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
	fi, err := j.f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size < j.size || !j.lastLineInPlace() {
		j.reset()
	}
	if size == j.size {
		return nil
	}
	lr := jsonl.NewLineReader(io.NewSectionReader(j.f, j.size, size-j.size), j.opts.MaxLineBytes)
	lr.SetOffset(j.size, j.lines)
	lr.Follow = !locked
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
		if _, be := checkLine(j.path, l, j.lines+1); be != nil {
			return be
		}
		j.lastOff = l.Offset
		j.last = append(j.last[:0], l.Bytes...)
		j.size = l.Offset + l.Size
		j.lines++
		j.unsaved++
	}
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
	f, err := openJournalFile(j.path)
	if err != nil {
		return err
	}
	j.f.Close()
	j.f = f
	j.reset()
	return nil
}

// lastLineInPlace reports whether the remembered last line is still where
// it was: one pread, so a truncate-and-regrow is noticed cheaply.
func (j *Journal) lastLineInPlace() bool {
	if j.size == 0 {
		return true
	}
	b := make([]byte, j.size-j.lastOff)
	if _, err := j.f.ReadAt(b, j.lastOff); err != nil {
		return false
	}
	return b[len(b)-1] == '\n' && bytes.Equal(b[:len(b)-1], j.last)
}
