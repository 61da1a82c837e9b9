package journal

import (
	"bytes"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/procid"
)

// ownerFile is the owner record inside the lock directory.
const ownerFile = "owner.json"

// Acquisition backs off from minBackoff, doubling up to maxBackoff, with
// jitter. The lock is held for tens of microseconds, so the first retries
// are short.
const (
	minBackoff      = 20 * time.Microsecond
	maxBackoff      = 2 * time.Millisecond
	staleCheckEvery = 10 * time.Millisecond
)

// owner is <journal>.lock/owner.json. pid, token and createdAt are the
// reference writer's fields; startTime, bootId and host are lcwrap's, so a
// reused pid is told apart from the owner.
type owner struct {
	PID       int    `json:"pid"`
	Token     string `json:"token"`
	CreatedAt int64  `json:"createdAt"`
	StartTime uint64 `json:"startTime,omitempty"`
	BootID    string `json:"bootId,omitempty"`
	Host      string `json:"host,omitempty"`
}

func (o owner) String() string {
	s := fmt.Sprintf("pid %d", o.PID)
	if o.Host != "" {
		s += " on " + o.Host
	}
	if o.CreatedAt > 0 {
		s += ", locked at " + time.UnixMilli(o.CreatedAt).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return s
}

var (
	selfOnce sync.Once
	self     procid.Identity
)

// selfIdentity is this process's identity; only the pid when /proc cannot
// tell more.
func selfIdentity() procid.Identity {
	selfOnce.Do(func() {
		id, err := procid.Self()
		if err != nil {
			id = procid.Identity{PID: os.Getpid(), Host: procid.Host(), BootID: procid.BootID()}
		}
		self = id
	})
	return self
}

// locker implements the lock directory protocol for one journal.
//
// Taking the lock makes <journal>.lock appear atomically with owner.json
// inside. Where the file system supports renameat2(RENAME_NOREPLACE), the
// locker prepares its own directory once (<journal>.lock.idle-<hex>, with
// owner.json), rewrites the record in place before each use and renames
// the directory to the lock path; releasing renames it back. That is three
// cheap calls instead of mkdir, create, unlink and rmdir, which allocate
// and free inodes and cost hundreds of microseconds on some file systems.
// Other writers cannot tell the difference: mkdir of the lock path fails
// while it is there, as it would for a directory made with mkdir.
// Elsewhere it falls back to mkdir and a new owner.json each time.
type locker struct {
	dir   string
	stale time.Duration
	table procid.Table // the process table that judges owners (tests replace it)

	noRename bool   // renameNoReplace unsupported here: use mkdir
	spare    *spare // our prepared directory, nil until needed
	swept    bool   // spares of dead writers were looked for
}

// spare is a prepared lock directory.
type spare struct {
	dir  string   // its idle path
	f    *os.File // its owner.json
	held bool     // it is at the lock path now
}

var (
	// errBusy means the lock is held: wait and try again.
	errBusy = errors.New("lock held")
	// errNoRename means renameNoReplace is unsupported on this file system.
	errNoRename = errors.New("no atomic rename without replace")
)

// recordSize is the size owner records are padded to, so a record
// rewritten in place never leaves bytes of the previous one behind.
const recordSize = 512

// acquire takes the lock and returns our token.
//
// Outcomes: the token and nil; a *LockTimeoutError (ErrLockTimeout) when
// the lock stayed held for timeout; an *fs.PathError wrapping ErrSymlink
// when the lock path is a symlink; an error when the lock path is not a
// directory or the lock cannot be made for another reason.
func (l *locker) acquire(timeout time.Duration) (string, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	wait := minBackoff
	var lastCheck time.Time
	for {
		tok, err := l.try()
		if err == nil {
			return tok, nil
		}
		if !errors.Is(err, errBusy) {
			return "", err
		}
		now := time.Now()
		if now.Sub(lastCheck) >= staleCheckEvery {
			lastCheck = now
			reclaimed, err := l.reclaimIfStale()
			if err != nil {
				return "", err
			}
			if reclaimed {
				continue
			}
		}
		if now.After(deadline) {
			return "", l.timeoutError(now.Sub(start))
		}
		d := wait/2 + rand.N(wait/2+1)
		pause(max(min(d, time.Until(deadline)), time.Microsecond))
		wait = min(2*wait, maxBackoff)
	}
}

// try makes one attempt; errBusy when the lock is held.
func (l *locker) try() (string, error) {
	if !l.noRename {
		tok, err := l.trySpare()
		if !errors.Is(err, errNoRename) {
			return tok, err
		}
		l.noRename = true
	}
	return l.tryMkdir()
}

func (l *locker) trySpare() (string, error) {
	if l.spare == nil {
		if err := l.prepare(); err != nil {
			return "", err
		}
	}
	tok, rec := newRecord()
	if _, err := l.spare.f.WriteAt(rec, 0); err != nil {
		l.close()
		return "", fmt.Errorf("journal lock %s: writing the owner record: %w", l.dir, err)
	}
	now := time.Now()
	os.Chtimes(l.spare.dir, now, now) // the lock's age starts now
	err := renameNoReplace(l.spare.dir, l.dir)
	switch {
	case err == nil:
		l.spare.held = true
		return tok, nil
	case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTEMPTY):
		return "", errBusy
	case errors.Is(err, errors.ErrUnsupported), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOSYS):
		l.close()
		return "", errNoRename
	case errors.Is(err, fs.ErrNotExist):
		l.spare.f.Close() // our directory vanished: make another next time
		l.spare = nil
		return "", errBusy
	}
	return "", fmt.Errorf("journal lock %s: %w", l.dir, err)
}

// prepare makes our spare lock directory, after removing spares left by
// dead writers.
func (l *locker) prepare() error {
	if !l.swept {
		l.swept = true
		l.sweepSpares()
	}
	var raw [8]byte
	crand.Read(raw[:])
	dir := fmt.Sprintf("%s.idle-%x", l.dir, raw)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		os.Remove(dir)
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	l.spare = &spare{dir: dir, f: f}
	return nil
}

// sweepSpares removes the spare directories of writers that are
// demonstrably dead (judged like a stale lock); live writers' are kept.
func (l *locker) sweepSpares() {
	parent, prefix := filepath.Dir(l.dir), filepath.Base(l.dir)+".idle-"
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() || l.judge(p, fi).why != "" {
			continue
		}
		os.Remove(filepath.Join(p, ownerFile))
		os.Remove(p)
	}
}

// close removes our spare directory (when it is not holding the lock).
func (l *locker) close() {
	if l.spare == nil {
		return
	}
	l.spare.f.Close()
	if !l.spare.held {
		os.Remove(filepath.Join(l.spare.dir, ownerFile))
		os.Remove(l.spare.dir)
	}
	l.spare = nil
}

// newRecord returns a fresh token and the owner record holding it.
func newRecord() (string, []byte) {
	var raw [16]byte
	crand.Read(raw[:]) // crypto/rand does not fail on Linux
	tok := hex.EncodeToString(raw[:])
	id := selfIdentity()
	b, _ := json.Marshal(owner{
		PID: id.PID, Token: tok, CreatedAt: time.Now().UnixMilli(),
		StartTime: id.StartTime, BootID: id.BootID, Host: id.Host,
	})
	if pad := recordSize - 1 - len(b); pad > 0 {
		b = append(b, bytes.Repeat([]byte(" "), pad)...)
	}
	return tok, append(b, '\n')
}

// tryMkdir is the portable attempt: mkdir, then a new owner.json.
func (l *locker) tryMkdir() (string, error) {
	err := os.Mkdir(l.dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		return "", errBusy
	}
	if err != nil {
		return "", fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	tok, rec := newRecord()
	name := filepath.Join(l.dir, ownerFile)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		// A reclaimer moved the old lock away and another writer's record
		// landed in our directory: it is theirs.
		return "", errBusy
	}
	if err != nil {
		os.Remove(l.dir) // empty: ours, made a moment ago
		return "", fmt.Errorf("journal lock %s: writing the owner record: %w", l.dir, err)
	}
	_, werr := f.Write(rec)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(name)
		os.Remove(l.dir)
		return "", fmt.Errorf("journal lock %s: writing the owner record: %w", l.dir, err)
	}
	return tok, nil
}

// readOwner reads dir/owner.json without following a symlink.
func readOwner(dir string) (owner, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return owner{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return owner{}, err
	}
	var o owner
	if err := json.Unmarshal(b, &o); err != nil {
		return owner{}, fmt.Errorf("%w: owner record is not JSON: %v", errNoOwner, err)
	}
	if o.PID <= 0 || o.Token == "" {
		return owner{}, fmt.Errorf("%w: owner record lacks pid or token", errNoOwner)
	}
	return o, nil
}

// errNoOwner marks an owner record that is missing its required fields.
var errNoOwner = errors.New("no usable owner record")

// release gives the lock up if it still holds our token: our spare is
// renamed back to its idle path, or owner.json and the directory are
// removed.
//
// Outcomes: nil; an error wrapping ErrLockLost when the record is missing
// or names another token (nothing is removed then); an I/O error from the
// removal.
func (l *locker) release(token string) error {
	o, err := readOwner(l.dir)
	if err == nil && o.Token != token {
		err = fmt.Errorf("it now belongs to %s (another token)", o)
	}
	if err != nil {
		if l.spare != nil && l.spare.held {
			l.spare.f.Close() // moved away by someone else: not ours to touch
			l.spare = nil
		}
		return fmt.Errorf("%w: %s: %v; nothing removed", ErrLockLost, l.dir, err)
	}
	if l.spare != nil && l.spare.held {
		if renameNoReplace(l.dir, l.spare.dir) == nil {
			l.spare.held = false
			return nil
		}
		l.spare.f.Close()
		l.spare = nil
	}
	if err := os.Remove(filepath.Join(l.dir, ownerFile)); err != nil {
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	if err := os.Remove(l.dir); err != nil {
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	return nil
}

// judgement is what reclaimIfStale concluded about the current lock.
type judgement struct {
	owner    owner
	hasOwner bool
	why      string // why it may not be reclaimed ("" when it may)
}

// judge decides whether the lock directory described by fi may be
// reclaimed: only when it is older than the stale age AND its owner is
// demonstrably dead on this host. A directory without a usable owner
// record may be reclaimed once it is older than the stale age (a live owner
// writes the record right after mkdir).
func (l *locker) judge(dir string, fi fs.FileInfo) judgement {
	var j judgement
	o, err := readOwner(dir)
	switch {
	case err == nil:
		j.owner, j.hasOwner = o, true
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNoOwner), errors.Is(err, syscall.ELOOP):
		// no owner record: judged by age alone
	default:
		j.why = "its owner record cannot be read (" + err.Error() + ")"
		return j
	}
	age := time.Since(fi.ModTime())
	if j.hasOwner {
		age = min(age, time.Since(time.UnixMilli(o.CreatedAt)))
	}
	if age < l.stale {
		j.why = fmt.Sprintf("the lock is younger than the stale age (%v)", l.stale)
		return j
	}
	if !j.hasOwner {
		return j
	}
	v := procid.Check(l.table, procid.Identity{PID: o.PID, StartTime: o.StartTime, BootID: o.BootID, Host: o.Host})
	if v.Status != procid.Gone {
		j.why = "its owner is not provably dead (" + v.Status.String() + ": " + v.Reason + ")"
	}
	return j
}

// reclaimIfStale moves a stale lock aside and removes it.
//
// Outcomes: true when the lock was reclaimed (try mkdir again); false when
// it may not be reclaimed or changed meanwhile; an *fs.PathError wrapping
// ErrSymlink when the lock path is a symlink; an error when it is not a
// directory (lcwrap never removes it then).
func (l *locker) reclaimIfStale() (bool, error) {
	fi, err := os.Lstat(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return false, &fs.PathError{Op: "journal lock", Path: l.dir, Err: ErrSymlink}
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("journal lock %s exists but is not a directory; lcwrap will not remove it: move it away once no writer uses the journal", l.dir)
	}
	j := l.judge(l.dir, fi)
	if j.why != "" {
		return false, nil
	}
	var raw [8]byte
	crand.Read(raw[:])
	aside := l.dir + ".stale-" + hex.EncodeToString(raw[:])
	if err := os.Rename(l.dir, aside); err != nil {
		return false, nil // released or reclaimed meanwhile: try again
	}
	// Make sure we moved the lock we judged, not a fresh one that replaced
	// it between the judgement and the rename.
	afi, err := os.Lstat(aside)
	same := err == nil && time.Since(afi.ModTime()) >= l.stale
	if same {
		o, err := readOwner(aside)
		if j.hasOwner {
			same = err == nil && o.Token == j.owner.Token
		} else {
			same = err != nil
		}
	}
	if !same {
		// Put it back. If a new lock took its place meanwhile, leave it
		// aside: removing another writer's lock is never an option.
		os.Rename(aside, l.dir)
		return false, nil
	}
	os.Remove(filepath.Join(aside, ownerFile))
	os.Remove(aside) // fails, harmlessly, when the directory holds anything else
	return true, nil
}

func (l *locker) timeoutError(waited time.Duration) error {
	e := &LockTimeoutError{Lock: l.dir, Waited: waited, Why: "other writers kept taking it"}
	fi, err := os.Lstat(l.dir)
	if err != nil || !fi.IsDir() {
		return e
	}
	j := l.judge(l.dir, fi)
	if j.hasOwner {
		e.Owner = j.owner.String()
	}
	if j.why != "" {
		e.Why = j.why
	}
	return e
}
