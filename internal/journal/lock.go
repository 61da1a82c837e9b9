package journal

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/event"
)

// ownerFile is the owner record inside the lock directory.
const ownerFile = "owner.json"

// Protocol is the marker lcwrap writes into owner records it makes while
// holding the kernel lock (docs/journal.md, "Lock"). Under the kernel lock,
// a lock directory whose record carries it is provably abandoned.
const Protocol = "lcwrap-kernel-lock/1"

// Acquisition backs off from minBackoff, doubling up to maxBackoff, with
// jitter. The lock is held for tens of microseconds, so the first retries
// are short.
const (
	minBackoff      = 20 * time.Microsecond
	maxBackoff      = 2 * time.Millisecond
	staleCheckEvery = 10 * time.Millisecond
)

// owner is <journal>.lock/owner.json. pid, token and createdAt are the
// reference writer's fields; the others are lcwrap's: startTime, bootId
// and host tell a reused pid apart from the owner, pidNs names the PID
// namespace the pid belongs to, protocol says the owner held the kernel
// lock while it made the record.
type owner struct {
	PID       int    `json:"pid"`
	Token     string `json:"token"`
	CreatedAt int64  `json:"createdAt"`
	StartTime uint64 `json:"startTime,omitempty"`
	// StartClock is StartTime's unit (omitted: clock ticks).
	StartClock event.Clock `json:"startClock,omitempty"`
	BootID     string      `json:"bootId,omitempty"`
	Host       string      `json:"host,omitempty"`
	PIDNS      string      `json:"pidNs,omitempty"`
	Protocol   string      `json:"protocol,omitempty"`
}

func (o owner) String() string {
	s := fmt.Sprintf("pid %d", o.PID)
	if _, ns := selfIdentity(); o.PIDNS != "" && o.PIDNS != ns {
		s += " of another PID namespace (" + o.PIDNS + ")"
	}
	if o.Host != "" {
		s += " on " + o.Host
	}
	if o.CreatedAt > 0 {
		s += ", locked at " + time.UnixMilli(o.CreatedAt).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if o.Protocol == "" {
		s += " (a writer without the kernel lock)"
	}
	return s
}

// appendJSON encodes the record as encoding/json would (without
// reflection: it is on every writer's start-up path).
func (o owner) appendJSON(b []byte) []byte {
	b = append(b, `{"pid":`...)
	b = strconv.AppendInt(b, int64(o.PID), 10)
	b = append(b, `,"token":`...)
	b = event.AppendString(b, o.Token)
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, o.CreatedAt, 10)
	if o.StartTime != 0 {
		b = append(b, `,"startTime":`...)
		b = strconv.AppendUint(b, o.StartTime, 10)
	}
	for _, f := range [...]struct{ k, v string }{
		{"startClock", string(o.StartClock)}, {"bootId", o.BootID}, {"host", o.Host},
		{"pidNs", o.PIDNS}, {"protocol", o.Protocol},
	} {
		if f.v != "" {
			b = append(b, `,"`...)
			b = append(b, f.k...)
			b = append(b, `":`...)
			b = event.AppendString(b, f.v)
		}
	}
	return append(b, '}')
}

// lcwrapOwner reports whether the record was made under the kernel lock.
func (o owner) lcwrapOwner() bool { return o.Protocol == Protocol }

var (
	selfOnce sync.Once
	self     event.Identity
	selfNS   string
)

// selfIdentity is this process's identity; only the pid when /proc cannot
// tell more.
func selfIdentity() (event.Identity, string) {
	selfOnce.Do(func() {
		id, err := event.SelfIdentity()
		if err != nil {
			id = event.Identity{PID: os.Getpid(), Host: event.Host(), BootID: event.BootID()}
		}
		self = id
		selfNS = pidNamespace()
	})
	return self, selfNS
}

// pidNamespace names this process's PID namespace ("pid:[4026531836]"),
// "" when the system does not say.
func pidNamespace() string {
	s, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return s
}

// locker implements the lock protocol for one journal: the kernel lock on
// <journal>.lock.kernel (flock, released by the kernel when its holder
// dies), then the reference lock directory <journal>.lock.
//
// Taking the directory makes <journal>.lock appear atomically with
// owner.json inside. Where the file system supports renameat2, the locker
// prepares its own directory once (<journal>.lock.idle-<hex>, with
// owner.json, on which it holds a flock for its whole life so that others
// can tell it is alive), rewrites the record in place before each use and
// renames the directory to the lock path; releasing renames it back.
// Other writers cannot tell the difference: mkdir of the lock path fails
// while it is there, as it would for a directory made with mkdir.
// Elsewhere it falls back to mkdir and a new owner.json each time.
type locker struct {
	dir   string
	stale time.Duration
	table event.ProcTable // the process table that judges owners (tests replace it)
	view  func() pidView  // what /proc can prove (nil: procView; tests replace it)

	noRename bool // renameat2 unsupported here: use mkdir
	// noKernel behaves like a writer from before the kernel lock (tests
	// use it to play older lcwrap binaries and reference writers).
	noKernel bool
	// reference writes owner records as the contract's reference writer
	// does: pid, token and createdAt only (tests).
	reference bool
	kf        *os.File // <journal>.lock.kernel, open while the locker lives
	kheld     bool     // we hold the kernel lock now
	spare     *spare   // our prepared directory, nil until needed
	swept     bool     // spares of dead writers were looked for
	// onForeign is called (under the lock) when a lock directory turns out
	// to be held by a writer without the kernel lock.
	onForeign func(owner)
}

// spare is a prepared lock directory.
type spare struct {
	dir  string   // its idle path
	f    *os.File // its owner.json, flocked while we live
	held bool     // it is at the lock path now
}

var (
	// errBusy means the lock is held: wait and try again.
	errBusy = errors.New("lock held")
	// errNoRename means renameat2 is unsupported on this file system.
	errNoRename = errors.New("no atomic rename without replace")
)

// recordSize is the size owner records are padded to, so a record
// rewritten in place never leaves bytes of the previous one behind.
const recordSize = 512

func (l *locker) kernelPath() string { return l.dir + ".kernel" }

// acquire takes the lock and returns our token.
//
// Outcomes: the token and nil; a *LockTimeoutError (ErrLockTimeout) when
// the lock stayed held for timeout; an *UnsafeError (ErrUnsafe, and
// ErrSymlink for a symlink) when the kernel lock or the lock path is a
// symlink or another user's; an error when the lock path is not a
// directory or the lock cannot be made for another reason.
func (l *locker) acquire(timeout time.Duration) (string, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	if err := l.lockKernel(start, deadline); err != nil {
		return "", err
	}
	tok, err := l.acquireDir(start, deadline)
	if err != nil {
		l.unlockKernel()
	}
	return tok, err
}

// lockKernel takes the flock on the sidecar, making sure the one locked is
// still the one at its path (a sidecar deleted and recreated would
// otherwise let two writers each lock their own).
func (l *locker) lockKernel(start, deadline time.Time) error {
	if l.noKernel {
		return nil
	}
	b := Backoff{Min: minBackoff, Max: maxBackoff}
	for {
		if l.kf == nil {
			f, err := openFile(l.kernelPath(), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
			if err != nil {
				if e := explainOpen(l.kernelPath(), "kernel lock", err); errors.Is(e, ErrUnsafe) {
					return e
				}
				return fmt.Errorf("journal lock %s: %w", l.kernelPath(), err)
			}
			// Someone else's file there could be held locked by them
			// for ever: refused at once rather than waited on.
			fi, err := f.Stat()
			if err == nil && !fi.Mode().IsRegular() {
				err = fmt.Errorf("journal lock %s: %w", l.kernelPath(), ErrNotRegular)
			} else if ue := checkSafeInfo(l.kernelPath(), "kernel lock", fi, err); ue != nil {
				err = ue
			}
			if err != nil {
				f.Close()
				return err
			}
			l.kf = f
		}
		err := Flock(l.kf, deadline, &b)
		if errors.Is(err, ErrFlockTimeout) {
			e := l.timeoutError(time.Since(start))
			e.Why = "another lcwrap writer held the kernel lock the whole time (it is alive: the kernel releases it when its holder dies)"
			return e
		}
		if err != nil {
			return fmt.Errorf("journal lock %s: flock: %w", l.kernelPath(), err)
		}
		ffi, ferr := l.kf.Stat()
		pfi, perr := os.Lstat(l.kernelPath())
		if ferr == nil && perr == nil && os.SameFile(ffi, pfi) {
			l.kheld = true
			return nil
		}
		l.kf.Close() // replaced under us: lock the one there now
		l.kf = nil
	}
}

func (l *locker) unlockKernel() {
	if l.kheld {
		unflock(l.kf)
		l.kheld = false
	}
}

// acquireDir takes the lock directory, with the kernel lock held.
func (l *locker) acquireDir(start, deadline time.Time) (string, error) {
	b := Backoff{Min: minBackoff, Max: maxBackoff}
	var lastCheck time.Time // zero: the first busy attempt judges at once
	for {
		tok, err := l.try()
		if err == nil {
			return tok, nil
		}
		if !errors.Is(err, errBusy) {
			return "", err
		}
		now := time.Now()
		// An abandoned lcwrap directory is reclaimed at the first look; a
		// foreign owner is judged again every staleCheckEvery.
		if now.Sub(lastCheck) >= staleCheckEvery {
			lastCheck = now
			tok, reclaimed, err := l.reclaimIfStale()
			if err != nil {
				return "", err
			}
			if tok != "" {
				return tok, nil
			}
			if reclaimed {
				continue
			}
		}
		if now.After(deadline) {
			return "", l.timeoutError(now.Sub(start))
		}
		// Busy under the kernel lock means a writer without it holds the
		// directory (an lcwrap owner's would have been reclaimed). Wait
		// without the kernel lock: another lcwrap writer may be able to
		// judge that owner where this one cannot (from another PID
		// namespace), and holding it would stop that writer too.
		held := l.kheld
		l.unlockKernel()
		b.Pause(deadline)
		if held {
			if err := l.lockKernel(start, deadline); err != nil {
				if errors.Is(err, ErrLockTimeout) {
					return "", l.timeoutError(time.Since(start))
				}
				return "", err
			}
		}
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
	tok, err := l.refreshSpare()
	if err != nil {
		return "", err
	}
	err = renameNoReplace(l.spare.dir, l.dir)
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
		l.dropSpare() // our directory vanished: make another next time
		return "", errBusy
	}
	return "", fmt.Errorf("journal lock %s: %w", l.dir, err)
}

// refreshSpare makes sure our spare exists and holds a fresh record.
func (l *locker) refreshSpare() (string, error) {
	if l.spare == nil {
		if err := l.prepare(); err != nil {
			return "", err
		}
	}
	tok, rec := l.newRecord()
	if _, err := l.spare.f.WriteAt(rec, 0); err != nil {
		l.close()
		return "", fmt.Errorf("journal lock %s: writing the owner record: %w", l.dir, err)
	}
	// The directory's mtime is left as it is: every judge takes the
	// younger of it and createdAt, which is fresh.
	return tok, nil
}

func (l *locker) dropSpare() {
	if l.spare != nil {
		l.spare.f.Close()
		l.spare = nil
	}
}

// prepare makes our spare lock directory, after removing spares left by
// dead writers.
func (l *locker) prepare() error {
	if !l.swept {
		l.swept = true
		if s := l.sweepSpares(); s != nil {
			l.spare = s // a free one, left by a writer that is gone
			return nil
		}
	}
	var raw [8]byte
	random(raw[:])
	dir := fmt.Sprintf("%s.idle-%x", l.dir, raw)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	f, err := openFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		os.Remove(dir)
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	if !l.noKernel {
		unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) // ours alone: it was just made
	}
	l.spare = &spare{dir: dir, f: f}
	return nil
}

// sweepSpares looks at the spare directories beside the lock. A free
// lcwrap spare (nobody holds a flock on its owner.json: its writer closed
// the journal or died) is adopted — the first one, returned with our flock
// on it — or removed; others are judged like a stale lock and removed when
// their writer is gone. Live writers' spares are kept. So spares are
// reused, and no more of them stay than writers ran at once.
func (l *locker) sweepSpares() *spare {
	parent, base := filepath.Dir(l.dir), filepath.Base(l.dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var adopted *spare
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, base+".") {
			continue
		}
		rest := name[len(base)+1:]
		if !strings.HasPrefix(rest, "idle-") && !strings.HasPrefix(rest, "stale-") {
			continue
		}
		p := filepath.Join(parent, name)
		if checkPath(p, "spare lock directory", false) != nil {
			continue // not ours: never adopted nor removed
		}
		if !l.noKernel && strings.HasPrefix(rest, "idle-") {
			if f := freeSpare(p); f != nil {
				if adopted == nil {
					adopted = &spare{dir: p, f: f}
					continue
				}
				os.Remove(filepath.Join(p, ownerFile))
				os.Remove(p)
				f.Close()
				continue
			}
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			continue
		}
		if !l.spareAbandoned(p, fi) {
			continue
		}
		os.Remove(filepath.Join(p, ownerFile))
		os.Remove(p) // fails, harmlessly, when it holds anything else
	}
	return adopted
}

// freeSpare returns dir's owner.json, flocked by us, when it is an lcwrap
// spare nobody holds; nil otherwise.
func freeSpare(dir string) *os.File {
	f, err := openFile(filepath.Join(dir, ownerFile), os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var b [recordSize]byte
	n, _ := f.ReadAt(b[:], 0)
	if !bytes.Contains(b[:n], []byte(`"protocol":"`+Protocol+`"`)) {
		f.Close()
		return nil
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return f
}

// spareAbandoned reports whether a prepared (or set-aside) directory's
// writer is gone.
func (l *locker) spareAbandoned(p string, fi fs.FileInfo) bool {
	o, err := readOwner(p)
	if err == nil && o.lcwrapOwner() {
		f, err := os.OpenFile(filepath.Join(p, ownerFile), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			return false // its writer is alive
		}
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return true
	}
	return l.judge(p, fi, false).why == ""
}

// close lets our spare directory go (it stays, free, for the next
// writer to adopt; without the kernel lock it is removed) and closes the
// kernel lock's file.
func (l *locker) close() {
	if l.spare != nil {
		if !l.spare.held && l.noKernel {
			os.Remove(filepath.Join(l.spare.dir, ownerFile))
			os.Remove(l.spare.dir)
		}
		l.spare.f.Close() // releases our flock on it: it is free now
		l.spare = nil
	}
	if l.kf != nil {
		l.unlockKernel()
		l.kf.Close()
		l.kf = nil
	}
}

// newRecord returns a fresh token and the owner record holding it.
func (l *locker) newRecord() (string, []byte) {
	var raw [16]byte
	random(raw[:])
	tok := hex.EncodeToString(raw[:])
	id, ns := selfIdentity()
	o := owner{
		PID: id.PID, Token: tok, CreatedAt: time.Now().UnixMilli(),
		StartTime: id.StartTime, StartClock: id.Clock, BootID: id.BootID, Host: id.Host, PIDNS: ns,
	}
	if !l.noKernel {
		o.Protocol = Protocol
	}
	if l.reference {
		o = owner{PID: o.PID, Token: o.Token, CreatedAt: o.CreatedAt}
	}
	b := o.appendJSON(make([]byte, 0, recordSize))
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
	tok, rec := l.newRecord()
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
	return parseOwner(b)
}

// parseOwner decodes an owner record: a JSON object with a positive pid
// and a token (createdAt and lcwrap's fields are optional).
func parseOwner(b []byte) (owner, error) {
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
// removed; then the kernel lock is released.
//
// Outcomes: nil; an error wrapping ErrLockLost when the record is missing
// or names another token (nothing is removed then); an I/O error from the
// removal.
func (l *locker) release(token string) error {
	defer l.unlockKernel()
	if l.spare != nil && l.spare.held && l.ownsLockPath(token) {
		// Our spare's owner.json is at the lock path and still holds our
		// token: a stat and a pread instead of an open and a read.
		if renameNoReplace(l.dir, l.spare.dir) == nil {
			l.spare.held = false
			return nil
		}
	}
	o, err := readOwner(l.dir)
	if err == nil && o.Token != token {
		err = fmt.Errorf("it now belongs to %s (another token)", o)
	}
	if err != nil {
		if l.spare != nil && l.spare.held {
			l.dropSpare() // moved away by someone else: not ours to touch
		}
		return fmt.Errorf("%w: %s: %v; nothing removed", ErrLockLost, l.dir, err)
	}
	if l.spare != nil && l.spare.held {
		if renameNoReplace(l.dir, l.spare.dir) == nil {
			l.spare.held = false
			return nil
		}
		l.dropSpare()
	}
	if err := os.Remove(filepath.Join(l.dir, ownerFile)); err != nil {
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	if err := os.Remove(l.dir); err != nil {
		return fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	return nil
}

// ownsLockPath reports whether the owner.json at the lock path is our
// spare's file (same inode) and holds token.
func (l *locker) ownsLockPath(token string) bool {
	pfi, err := os.Lstat(filepath.Join(l.dir, ownerFile))
	if err != nil {
		return false
	}
	ffi, err := l.spare.f.Stat()
	if err != nil || !os.SameFile(pfi, ffi) {
		return false
	}
	var b [recordSize]byte
	n, _ := l.spare.f.ReadAt(b[:], 0)
	return bytes.Contains(b[:n], []byte(`"token":"`+token+`"`)) // tokens are hex
}

// judgement is what judge concluded about a lock directory.
type judgement struct {
	owner    owner
	hasOwner bool
	alive    bool   // its owner is alive
	why      string // why it may not be reclaimed ("" when it may)
}

// noRecordGrace is the least age at which a lock directory without a
// usable owner record is reclaimed, whatever the stale age: its writer
// may be alive between making the directory and writing the record, and
// under load that takes longer than a short stale age (at 5 ms, live
// writers were robbed there and two appended at once). lcwrap's own
// directories arrive with their record.
const noRecordGrace = 10 * time.Second

// judge decides whether the lock directory dir (described by fi) may be
// reclaimed. With the kernel lock held, a record carrying the protocol
// marker is abandoned: its writer held the kernel lock while it held the
// directory, and we hold it now. Any other directory only when it is
// older than the stale age AND its owner is demonstrably dead on this host
// and in every PID namespace its pid may belong to (check). A directory
// without a usable owner record may be reclaimed once it is older than
// the stale age and noRecordGrace. Unless full, an owner is not judged
// while its lock is younger than the stale age (judging may read the
// whole process table).
func (l *locker) judge(dir string, fi fs.FileInfo, full bool) judgement {
	var j judgement
	o, err := readOwner(dir)
	switch {
	case err == nil:
		j.owner, j.hasOwner = o, true
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNoOwner), errors.Is(err, syscall.ELOOP):
		// no owner record: judged by age alone
	default:
		j.why = "its owner record cannot be read (" + err.Error() + "); lcwrap never reclaims a lock it cannot judge" + l.breakHint("")
		return j
	}
	if j.hasOwner && o.lcwrapOwner() && l.kheld {
		return j // abandoned: see above
	}
	age, known := lockAge(fi, o, j.hasOwner, time.Now())
	if !j.hasOwner {
		if floor := max(l.stale, noRecordGrace); known && age < floor {
			j.why = fmt.Sprintf("it has no owner record yet (its writer may be between making it and writing the record) and is %v old; such a lock is reclaimed once older than %v", age.Round(time.Millisecond), floor)
		}
		return j
	}
	young := known && age < l.stale
	if young && !full {
		j.why = fmt.Sprintf("the lock is %v old, younger than the stale age (%v); its owner is judged once it is older", age.Round(time.Millisecond), l.stale)
		return j
	}
	v := l.check(o)
	switch {
	case v.Status == event.Alive:
		j.alive = true
		j.why = fmt.Sprintf("its owner is alive (%s); a live owner's lock is never reclaimed, however old: it is held until that process releases it or exits", v.Reason)
	case v.Status != event.Gone:
		j.why = "its owner is not provably dead (" + v.Status.String() + ": " + v.Reason + "); such a lock is never reclaimed" + l.breakHint(o.Token)
	case young:
		j.why = fmt.Sprintf("its owner is dead, but the lock is %v old, younger than the stale age (%v); it is reclaimed once older", age.Round(time.Millisecond), l.stale)
	}
	return j
}

// BreakLockDoc is where docs/journal.md says how to break a lock by hand.
const BreakLockDoc = "docs/journal.md#breaking-a-lock-by-hand"

// breakHint names the step that breaks a lock lcwrap cannot judge.
func (l *locker) breakHint(token string) string {
	journal := strings.TrimSuffix(l.dir, ".lock")
	if token == "" || !plainToken(token) {
		return fmt.Sprintf("; once you know its writer has exited, move %s away by hand (%s)", l.dir, BreakLockDoc)
	}
	return fmt.Sprintf("; once you know that process has exited, break the lock: lcwrap journal unlock --journal %s --token %s (%s)", shellQuote(journal), token, BreakLockDoc)
}

// plainToken reports whether a token can be shown in a command line as it
// is (the reference writer's UUIDs, lcwrap's hex).
func plainToken(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// shellQuote quotes a path for a shell when it needs it.
func shellQuote(s string) string {
	if plainPath(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func plainPath(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune("-_./+:,@%", c)) {
			return false
		}
	}
	return s != ""
}

// pidView is what this process's /proc can prove about pids.
type pidView struct {
	ns  string // this process's PID namespace, "" when unknown
	own bool   // /proc shows this process's own PID namespace
	// all: /proc belongs to the initial PID namespace, which is this
	// process's, and hides nothing: every process of the machine is
	// there, with its pid in each namespace it belongs to.
	all bool
	why string // why not all
}

// check judges an owner's process. A pid is judged only where it can be
// seen: a pid recorded in another PID namespace is never judged gone; a
// pid recorded without its namespace (the reference writer records none)
// is judged gone only when no process of the machine has it in any PID
// namespace, which only a process of the initial namespace can tell. A
// pid that cannot be seen is not a dead pid.
func (l *locker) check(o owner) event.Verdict {
	if o.Host != "" && o.Host != event.Host() {
		return event.Verdict{Status: event.ProcUnknown, Reason: "recorded on host " + o.Host + ", this is " + event.Host()}
	}
	if o.BootID != "" && event.BootID() != "" && o.BootID != event.BootID() {
		return event.Verdict{Status: event.Gone, Reason: "the host has rebooted since the process was recorded"}
	}
	view := procView()
	if l.view != nil {
		view = l.view()
	}
	switch {
	case o.PIDNS != "" && o.PIDNS != view.ns:
		return event.Verdict{Status: event.ProcUnknown, Reason: "its pid belongs to another PID namespace (" + o.PIDNS + "), which this process cannot inspect"}
	case o.PIDNS != "" && !view.own:
		return event.Verdict{Status: event.ProcUnknown, Reason: fmt.Sprintf("its pid %d belongs to this process's PID namespace, but %s", o.PID, view.why)}
	case o.PIDNS != "":
		return l.checkHere(o)
	case view.all:
		return l.checkEverywhere(o)
	}
	v := l.checkHere(o)
	if v.Status == event.Alive {
		return v
	}
	what := fmt.Sprintf("here, pid %d: %s", o.PID, v.Reason)
	if comm, ok := kernelThread(o.PID); ok {
		what = fmt.Sprintf("pid %d here is a kernel thread (%s), not the owner", o.PID, comm)
	}
	return event.Verdict{Status: event.ProcUnknown, Reason: fmt.Sprintf("its record names no PID namespace, and %s: %s; the owner may be alive in another PID namespace", view.why, what)}
}

// identity is the owner's process identity as recorded.
func (o owner) identity(pid int) event.Identity {
	return event.Identity{PID: pid, StartTime: o.StartTime, Clock: o.StartClock, BootID: o.BootID, Host: o.Host}
}

// checkHere judges the owner's pid as this process's namespace sees it.
// "No process has that pid" is believed only when kill(2) agrees (/proc
// may hide other users' processes); a kernel thread is never the owner.
func (l *locker) checkHere(o owner) event.Verdict {
	v := event.CheckIdentity(l.table, o.identity(o.PID))
	switch {
	case v.Status == event.Gone && pidExists(o.PID):
		if _, err := l.table.Stat(o.PID); errors.Is(err, event.ErrNoProcess) {
			return event.Verdict{Status: event.ProcUnknown, Reason: fmt.Sprintf("a process has pid %d (kill(2) finds it) but /proc does not show it (hidepid?)", o.PID)}
		}
	case v.Status == event.ProcUnknown && o.StartTime == 0:
		if comm, ok := kernelThread(o.PID); ok {
			return event.Verdict{Status: event.Gone, Reason: fmt.Sprintf("pid %d is a kernel thread (%s) now, not the owner", o.PID, comm)}
		}
	}
	return v
}

// checkEverywhere judges a pid recorded without its PID namespace from
// the initial namespace: the owner is gone when no process has that pid
// in any namespace (kernel threads aside), or each that has it is another
// process (its start time differs) or has exited.
func (l *locker) checkEverywhere(o owner) event.Verdict {
	hosts, kthread, err := holdersOf(o.PID)
	if err != nil {
		return event.Verdict{Status: event.ProcUnknown, Reason: fmt.Sprintf("pid %d was recorded without its PID namespace, and the process table cannot be read to look for it in every namespace: %v", o.PID, err)}
	}
	var unknown *event.Verdict
	for _, h := range hosts {
		v := event.CheckIdentity(l.table, o.identity(h))
		where := fmt.Sprintf("pid %d", o.PID)
		if h != o.PID {
			where = fmt.Sprintf("process %d of this namespace has pid %d in a child PID namespace", h, o.PID)
		}
		switch v.Status {
		case event.Alive:
			return event.Verdict{Status: event.Alive, Reason: where + ": " + v.Reason}
		case event.ProcUnknown:
			if unknown == nil {
				unknown = &event.Verdict{Status: event.ProcUnknown, Reason: where + ": " + v.Reason}
			}
		}
	}
	if unknown != nil {
		if kthread != "" {
			unknown.Reason += fmt.Sprintf(" (pid %d in this namespace is a kernel thread, %s, not the owner)", o.PID, kthread)
		}
		return *unknown
	}
	reason := fmt.Sprintf("no process has pid %d in any PID namespace", o.PID)
	if kthread != "" {
		reason = fmt.Sprintf("pid %d here is a kernel thread (%s), which is not the owner, and no other process has pid %d in any PID namespace", o.PID, kthread, o.PID)
	}
	if len(hosts) > 0 {
		reason = fmt.Sprintf("every process that has pid %d, in any PID namespace, is another one or has exited", o.PID)
	}
	return event.Verdict{Status: event.Gone, Reason: reason}
}

// lockAge is the age of a lock: the younger of its directory's mtime and
// its record's createdAt. A time in the future is no evidence of youth
// (a clock that jumped, or a forged record) and is ignored; when neither
// time is usable the age is not known.
func lockAge(fi fs.FileInfo, o owner, hasOwner bool, now time.Time) (time.Duration, bool) {
	age, known := time.Duration(0), false
	if d := now.Sub(fi.ModTime()); d >= 0 {
		age, known = d, true
	}
	if hasOwner && o.CreatedAt > 0 {
		if d := now.Sub(time.UnixMilli(o.CreatedAt)); d >= 0 && (!known || d < age) {
			age, known = d, true
		}
	}
	return age, known
}

// reclaimIfStale replaces an abandoned or stale lock directory.
//
// On Linux the judged directory is swapped with our spare by
// renameat2(RENAME_EXCHANGE): our spare (with our record) lands at the
// lock path and the judged directory at our spare's name, where its inode
// is checked. Only when it is the one judged is it removed; anything else
// is swapped back. Elsewhere it is renamed aside and checked the same way.
//
// Outcomes: our token when the lock was reclaimed and is ours (the
// exchange); true when it was reclaimed and is free (try again); false
// when it may not be reclaimed or changed meanwhile; the errors of
// lockDir.
func (l *locker) reclaimIfStale() (string, bool, error) {
	fi, err := l.lockDir()
	if err != nil || fi == nil {
		return "", false, err
	}
	j := l.judge(l.dir, fi, false)
	if j.hasOwner && !j.owner.lcwrapOwner() && l.onForeign != nil {
		l.onForeign(j.owner)
	}
	if j.why != "" {
		return "", false, nil
	}
	return l.takeOver(fi, j)
}

// lockDir describes the directory at the lock path: nil when there is
// none; an *UnsafeError (ErrUnsafe, and ErrSymlink for a symlink) for a
// symlink or another user's directory; an error when it is something else
// than a directory (lcwrap never removes it then).
func (l *locker) lockDir() (fs.FileInfo, error) {
	fi, err := os.Lstat(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal lock %s: %w", l.dir, err)
	}
	// Another user's directory there (holding, say, a live pid of theirs)
	// would hold every writer off for good: refused at once. Its mode is
	// not judged: a reference writer's mkdir follows its umask.
	if ue := checkSafe(l.dir, "lock directory", fi, false); ue != nil {
		return nil, ue
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("journal lock %s exists but is not a directory; lcwrap will not remove it: move it away once no writer uses the journal", l.dir)
	}
	return fi, nil
}

// takeOver reclaims the lock directory fi, judged j: it is set aside and
// removed only when it is still the inode (and token) judged.
func (l *locker) takeOver(fi fs.FileInfo, j judgement) (string, bool, error) {
	aside, tok, err := l.setAside()
	exchanged := tok != ""
	if err != nil || aside == "" {
		return "", false, nil // released or reclaimed meanwhile: try again
	}
	// Make sure we hold the directory we judged.
	afi, err := os.Lstat(aside)
	same := err == nil && os.SameFile(afi, fi)
	if same {
		o, err := readOwner(aside)
		if j.hasOwner {
			same = err == nil && o.Token == j.owner.Token
		} else {
			same = err != nil
		}
	}
	if !same {
		// Put it back; if that fails, leave it aside: removing another
		// writer's lock is never an option.
		if exchanged {
			if exchange(aside, l.dir) != nil {
				l.dropSpare()
			}
		} else {
			renameNoReplace(aside, l.dir)
		}
		return "", false, nil
	}
	os.Remove(filepath.Join(aside, ownerFile))
	if os.Remove(aside) != nil {
		// It holds something else: keep it, under a name the sweep knows.
		var raw [8]byte
		random(raw[:])
		os.Rename(aside, fmt.Sprintf("%s.stale-%x", l.dir, raw))
	}
	if exchanged {
		// Our spare is at the lock path now; release puts it back.
		l.spare.held = true
	}
	return tok, true, nil
}

// setAside moves the directory at the lock path out of the way: swapped
// with our spare (tok is the token of our record, now at the lock path) or
// renamed to a fresh name (tok "").
func (l *locker) setAside() (aside, tok string, err error) {
	if !l.noRename {
		tok, err := l.refreshSpare()
		if err != nil {
			return "", "", err
		}
		if err := exchange(l.spare.dir, l.dir); err == nil {
			return l.spare.dir, tok, nil
		} else if !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSYS) {
			return "", "", nil
		}
	}
	var raw [8]byte
	random(raw[:])
	aside = fmt.Sprintf("%s.stale-%x", l.dir, raw)
	if err := os.Rename(l.dir, aside); err != nil {
		return "", "", nil
	}
	return aside, "", nil
}

func (l *locker) timeoutError(waited time.Duration) *LockTimeoutError {
	e := &LockTimeoutError{Lock: l.dir, Waited: waited, Why: "other writers kept taking it"}
	fi, err := os.Lstat(l.dir)
	if err != nil || !fi.IsDir() {
		return e
	}
	j := l.judge(l.dir, fi, true)
	if j.hasOwner {
		e.Owner = j.owner.String()
	}
	if j.why != "" {
		e.Why = j.why
	}
	return e
}
