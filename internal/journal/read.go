package journal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
)

// ClassNonMonotonic is the class of a line whose journalSequence is missing
// or differs from its position.
const ClassNonMonotonic event.Class = "non-monotonic"

// BlockedError is the first bad line of a journal that no quarantine
// record covers: nothing may be appended after it until `lcwrap journal
// repair` quarantines it (a dead writer's torn final line is quarantined
// by the next writer by itself).
type BlockedError struct {
	Path   string      // the file holding the line
	Line   int64       // its position (journalSequence it occupies)
	Offset int64       // byte offset of the line's first byte in Path
	Class  event.Class // a jsonl class or ClassNonMonotonic
	Reason string      // redacted, one line
	size   int64       // the line's size, its newline included
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("journal %s is append-blocked at line %d (byte %d): %s: %s; %s",
		e.Path, e.Line, e.Offset, e.Class, e.Reason, e.Advice())
}

// Torn reports whether the line is a torn final line (a writer killed
// inside write(2)), which the next writer quarantines by itself.
func (e *BlockedError) Torn() bool {
	return e.Class == event.ClassTruncated && !isSealedName(e.Path)
}

// isSealedName reports whether path is a sealed file's name
// (<journal>.sealed-<12 digits>).
func isSealedName(path string) bool {
	i := strings.LastIndex(path, sealedPrefix)
	if i < 0 || len(path)-i-len(sealedPrefix) != 12 {
		return false
	}
	_, err := strconv.ParseUint(path[i+len(sealedPrefix):], 10, 64)
	return err == nil
}

// Advice says what unblocks the journal: nothing for a torn final line
// (the next writer quarantines it; repair does it now), repair otherwise.
func (e *BlockedError) Advice() string {
	if e.Torn() {
		return "a torn final line, which the next writer quarantines by itself ('lcwrap journal repair' does it now)"
	}
	return "run 'lcwrap journal repair' to quarantine the bad range"
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// tornGrace is how long a reader waits for a final line without newline to
// be finished while a writer holds the lock. Writers write each batch with
// one write, so a line stays unfinished for microseconds unless the writer
// died mid-write.
var tornGrace = 100 * time.Millisecond

// pollInterval is how often Follow looks for appended lines.
const pollInterval = 50 * time.Millisecond

// openRead opens a journal file for reading, never through a symlink,
// never blocking on a FIFO, and refusing anything but a regular file.
func openRead(path string) (*os.File, error) {
	f, err := openFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, journalPathError("open journal", path, err)
	}
	return regularOnly(f, path)
}

// tailWait decides when a final line without newline is a torn write
// rather than a write in progress: once the lock has been seen free (and
// the line was read again after that), or once tornGrace has passed.
type tailWait struct {
	at       int64 // offset of the unfinished line
	deadline time.Time
	lockFree bool
}

func (w *tailWait) torn(path string, at int64) bool {
	now := time.Now()
	if w.deadline.IsZero() || w.at != at {
		*w = tailWait{at: at, deadline: now.Add(tornGrace)}
	}
	if w.lockFree || now.After(w.deadline) {
		return true
	}
	if _, err := os.Lstat(path + ".lock"); errors.Is(err, fs.ErrNotExist) {
		w.lockFree = true // read it once more before calling it torn
	}
	return false
}

// sealedPrefix is what a sealed file's name adds to the journal's path,
// followed by the journalSequence of its first line (zero-padded).
const sealedPrefix = ".sealed-"

// sealedName is the name a file whose first line is at first gets when it
// is sealed.
func sealedName(path string, first int64) string {
	return fmt.Sprintf("%s%s%012d", path, sealedPrefix, first)
}

// sealed is a sealed file of a journal.
type sealed struct {
	path  string
	first int64
}

// sealedFiles lists the sealed files of the journal at path in journal
// order. A sealed name that is still the live file (a rotation that died
// between its two steps) is not listed.
func sealedFiles(path string) ([]sealed, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)+sealedPrefix
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []sealed
	var live os.FileInfo
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n < 1 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if live == nil {
			live, _ = os.Lstat(path)
		}
		if fi, err := os.Lstat(p); err == nil && live != nil && os.SameFile(fi, live) {
			continue
		}
		out = append(out, sealed{path: p, first: n})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].first < out[b].first })
	return out, nil
}

// Sealed returns the paths of the journal's sealed files, oldest first;
// with the live file they are one journal.
func Sealed(path string) ([]string, error) {
	s, err := sealedFiles(path)
	var out []string
	for _, f := range s {
		out = append(out, f.path)
	}
	return out, err
}

// NoticeKind says what a reader noticed about the journal's files.
type NoticeKind string

// The notices.
const (
	// NoticeRotated: the live file was sealed and a new one started.
	NoticeRotated NoticeKind = "rotated"
	// NoticeQuarantined: a bad range was skipped, as a record after it says.
	NoticeQuarantined NoticeKind = "quarantined"
	// NoticeReplaced: the live file was replaced by one that does not
	// continue it (moved away, deleted, rewritten); it is read from its start.
	NoticeReplaced NoticeKind = "replaced"
)

// Notice is something a reader noticed (see ReadOptions.OnNotice).
type Notice struct {
	Kind        NoticeKind
	Path        string       // the file concerned
	Quarantined *Quarantined // for NoticeQuarantined
	Sequence    int64        // the journalSequence the reader had reached
}

// ReadOptions configures Read and FollowWith.
type ReadOptions struct {
	// After is the cursor: only lines with a greater journalSequence are
	// passed on.
	After int64
	// Control passes the journal's own records (IsControl) to fn too.
	Control bool
	// OnBlocked is called once per bad line that no quarantine record
	// covers (Follow waits there for a repair).
	OnBlocked func(*BlockedError)
	// OnNotice is called for rotations, skipped ranges and replacements.
	OnNotice func(Notice)
	// MaxPoll lets FollowWith look less often while nothing arrives:
	// every 50 ms after lines came, then twice as long each quiet look,
	// up to MaxPoll (a live view that should cost nothing when idle).
	// 0 keeps 50 ms.
	MaxPoll time.Duration
	// Watch lets FollowWith sleep while the journal is quiet: instead of
	// looking every MaxPoll it waits for the journal's directory to say
	// that one of its files changed (inotify, on Linux), and looks anyway
	// every WatchPoll in case a change went unsaid (a file system that
	// sends no events, such as a network one). While lines come it still
	// looks every 50 ms, each look taking all that came. Where no watch
	// can be set up it polls as without Watch (and tries again at each
	// look).
	Watch bool
	// WatchPoll is how often FollowWith looks under Watch although
	// nothing said the journal changed; 0 means 30 s.
	WatchPoll time.Duration

	// watching, when set, is called each time FollowWith starts waiting
	// on its watch, with the journalSequence it has reached (tests).
	watching func(seen int64)
}

// defaultWatchPoll is ReadOptions.WatchPoll's default.
const defaultWatchPoll = 30 * time.Second

// reader reads a journal's sealed files and then its live file as one.
type reader struct {
	path string
	o    ReadOptions
	fn   func(event.Record, []byte) error

	seen       int64 // highest journalSequence passed on (or the cursor)
	doneSealed int64 // first journalSequence of the last sealed file read (0: none)
	f          *os.File
	live       bool // f is the live file
	moved      bool // the live file just read was sealed or replaced
	cur        cursor
	w          tailWait
	reported   *BlockedError
	blocked    *BlockedError // the first bad line of a sealed file, kept for Read's result
}

func newReader(path string, o ReadOptions, fn func(event.Record, []byte) error) *reader {
	return &reader{path: path, o: o, fn: fn, seen: o.After}
}

func (r *reader) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

func (r *reader) visit(rec event.Record, raw []byte, ctl *controlDetails) error {
	if ctl != nil {
		if ctl.Journal.Quarantined != nil && r.cur.resolving && r.o.OnNotice != nil {
			r.o.OnNotice(Notice{Kind: NoticeQuarantined, Path: r.cur.path, Quarantined: ctl.Journal.Quarantined, Sequence: rec.JournalSequence})
		}
		if !r.o.Control {
			return nil
		}
	}
	if rec.JournalSequence <= r.seen {
		return nil
	}
	r.seen = rec.JournalSequence
	return r.fn(rec, raw)
}

func (r *reader) notice(n Notice) {
	if r.o.OnNotice != nil {
		r.o.OnNotice(n)
	}
}

func (r *reader) block(be *BlockedError) {
	if r.reported != nil && r.reported.Path == be.Path && r.reported.Offset == be.Offset && r.reported.Class == be.Class {
		return
	}
	r.reported = be
	if r.o.OnBlocked != nil {
		r.o.OnBlocked(be)
	}
}

// look reads what can be read now. follow says whether an unfinished or
// bad end of the live file is waited for (true) or final (false).
//
// Outcomes: nil (caught up; the live file may be missing); a
// *BlockedError at a bad line of the live file; fn's error; I/O errors.
func (r *reader) look(follow bool) error {
	for {
		if r.f == nil {
			done, err := r.openNext()
			if err != nil || done {
				return err
			}
		}
		size, err := fileSize(r.f)
		if err != nil {
			return err
		}
		if !r.live {
			// Sealed: immutable and whole.
			err := r.cur.run(size, true, linereader.DefaultMaxBytes, r.visit)
			var be *BlockedError
			if errors.As(err, &be) {
				r.block(be)
				if r.blocked == nil {
					r.blocked = be
				}
				err = nil
			}
			if err != nil {
				return err
			}
			r.close()
			continue
		}
		err = r.cur.run(size, false, linereader.DefaultMaxBytes, r.visit)
		var be *BlockedError
		if err != nil && !errors.As(err, &be) {
			return err
		}
		if be == nil && r.cur.partial > 0 {
			if !r.w.torn(r.path, r.cur.off) {
				if !follow {
					time.Sleep(time.Millisecond)
					continue
				}
				return nil
			}
			err = r.cur.run(size, true, linereader.DefaultMaxBytes, r.visit)
			if err != nil && !errors.As(err, &be) {
				return err
			}
		}
		// Was the live file sealed or replaced meanwhile? Then what it
		// holds is final: read it to its end and go on with the next.
		if moved, err := r.liveMoved(); err != nil || !moved {
			if be != nil {
				r.block(be)
				return be
			}
			return err
		}
		if size2, err := fileSize(r.f); err == nil && size2 > size {
			if err := r.cur.run(size2, true, linereader.DefaultMaxBytes, r.visit); err != nil && !errors.As(err, &be) {
				return err
			}
		}
		r.doneSealed = max(r.doneSealed, r.firstOf())
		r.moved = true
		r.close()
	}
}

// firstOf is the first journalSequence of the open file (its base + 1).
func (r *reader) firstOf() int64 { return r.cur.basePos + 1 }

// liveMoved reports whether the live path no longer names the open file.
func (r *reader) liveMoved() (bool, error) {
	pfi, err := os.Lstat(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	ffi, err := r.f.Stat()
	if err != nil {
		return false, err
	}
	return !os.SameFile(pfi, ffi), nil
}

// openNext opens the next sealed file not read yet, else the live file.
// done is true when there is nothing to read (no live file yet).
func (r *reader) openNext() (done bool, err error) {
	for attempt := 0; ; attempt++ {
		files, err := sealedFiles(r.path)
		if err != nil {
			return false, err
		}
		for i, s := range files {
			if s.first <= r.doneSealed {
				continue
			}
			if i+1 < len(files) && files[i+1].first <= r.seen+1 {
				r.doneSealed = s.first // holds only lines the cursor is past
				continue
			}
			f, err := openRead(s.path)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return false, err
			}
			r.doneSealed = s.first
			r.start(f, s.path, false)
			return false, nil
		}
		f, err := openRead(r.path)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		prev := r.cur.pos
		r.start(f, r.path, true)
		base := r.cur.pos
		if base > prev && attempt < 3 {
			// A gap: a rotation may have sealed a file after we listed
			// them. Look again before taking the gap as it is.
			if again, _ := sealedFiles(r.path); len(again) > 0 && again[len(again)-1].first > r.doneSealed && again[len(again)-1].first <= base {
				r.close()
				r.cur = cursor{pos: prev}
				continue
			}
		}
		if prev > 0 && base < prev {
			// Not a continuation: read the new file from its start.
			r.notice(Notice{Kind: NoticeReplaced, Path: r.path, Sequence: prev})
			r.seen = base
		} else if r.moved {
			r.notice(Notice{Kind: NoticeRotated, Path: r.path, Sequence: prev})
		}
		r.moved = false
		return false, nil
	}
}

// start makes f the file being read, its position the one its first line
// says (a segment start) or 0.
func (r *reader) start(f *os.File, path string, live bool) {
	r.f, r.live = f, live
	r.cur = cursor{path: path, f: f}
	r.cur.pos = peekBase(f)
	r.cur.basePos = r.cur.pos
	r.w = tailWait{}
}

// peekBase returns the position before a file's first line: that of its
// segment-start record, or 0.
func peekBase(f *os.File) int64 {
	c := cursor{path: "", f: f}
	var base int64
	size, err := fileSize(f)
	if err != nil || size == 0 {
		return 0
	}
	c.run(min(size, int64(linereader.DefaultMaxBytes)+1), false, linereader.DefaultMaxBytes, func(rec event.Record, raw []byte, ctl *controlDetails) error {
		if ctl != nil && ctl.Journal.Segment != nil && rec.Line.Offset == 0 {
			base = rec.JournalSequence - 1
		}
		return errStop
	})
	return base
}

var errStop = errors.New("stop")

// Read calls fn for each valid event line of the journal at path — its
// sealed files, then the live file, as one journal — whose journalSequence
// is greater than o.After, in order. Quarantined ranges are skipped (the
// records naming them go to fn only with o.Control). raw is the line as
// stored, without its newline, valid only during the call. Read takes no
// lock; a final line without newline is waited for briefly while a writer
// holds the lock, then treated as truncated.
//
// Outcomes: nil after the last line; fn's error as it is; a *BlockedError
// (wrapping ErrBlocked) at the first bad line no record covers, after fn
// has seen every valid line before it (a bad line in a sealed file is
// reported the same way, after the lines of the later files); an error
// wrapping fs.ErrNotExist when there is no journal; an *fs.PathError
// wrapping ErrSymlink or ErrNotRegular; other I/O errors wrapped with the
// path.
func Read(path string, o ReadOptions, fn func(rec event.Record, raw []byte) error) error {
	if _, err := openCheck(path); err != nil {
		return err
	}
	r := newReader(path, o, fn)
	defer r.close()
	if err := r.look(false); err != nil {
		return err
	}
	if r.blocked != nil {
		return r.blocked
	}
	return nil
}

// openCheck checks that the live file can be read (it exists, is regular
// and no symlink).
func openCheck(path string) (bool, error) {
	f, err := openRead(path)
	if err != nil {
		return false, err
	}
	f.Close()
	return true, nil
}

// Scan is Read with only a cursor.
func Scan(path string, after int64, fn func(rec event.Record, raw []byte) error) error {
	return Read(path, ReadOptions{After: after}, fn)
}

// Follow is FollowWith with a cursor and a blocked callback.
func Follow(ctx context.Context, path string, after int64, fn func(rec event.Record, raw []byte) error, onBlocked func(*BlockedError)) error {
	return FollowWith(ctx, path, ReadOptions{After: after, OnBlocked: onBlocked}, fn)
}

// FollowWith is Read that keeps going: after the last line it looks for
// new ones every 50 ms (or less often while quiet, see o.MaxPoll; polling
// works on every file system and costs one fstat per look), or, with
// o.Watch, when the journal's directory says they came, until ctx is done. It reads only whole lines. A
// rotation is followed (the sealed file is read to its end, then the new
// one); a repair or a heal appends a quarantine record after the bad
// range, which lets it read on; a bad line no record covers is reported
// once through o.OnBlocked and waited at. A journal that does not exist
// yet is waited for; one replaced by a file that does not continue it is
// read from its start (o.OnNotice says so).
//
// Outcomes: ctx.Err() when ctx is done; fn's error as it is; an
// *fs.PathError wrapping ErrSymlink or ErrNotRegular; other I/O errors.
func FollowWith(ctx context.Context, path string, o ReadOptions, fn func(rec event.Record, raw []byte) error) error {
	r := newReader(path, o, fn)
	defer r.close()
	var w *dirWatch
	defer func() {
		if w != nil {
			w.close()
		}
	}()
	watchPoll := o.WatchPoll
	if watchPoll <= 0 {
		watchPoll = defaultWatchPoll
	}
	wait := pollInterval
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		if o.Watch && w == nil {
			w = watchDir(ctx, path) // before the look: no change is missed
		}
		if w != nil {
			w.drain()
		}
		before := r.seen
		err := r.look(true)
		var be *BlockedError
		if err != nil && !errors.As(err, &be) {
			return err
		}
		switch {
		case r.seen != before || o.MaxPoll <= pollInterval && w == nil:
			wait = pollInterval
		case w != nil && r.unfinished():
			// An unfinished last line is judged by time and by the
			// lock, which the watch does not see.
			wait = pollInterval
		case w != nil:
			if o.watching != nil {
				o.watching(r.seen)
			}
			w.wait(ctx, watchPoll)
			if w.broken {
				w.close()
				w = nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			wait = pollInterval
			continue
		default:
			wait = min(2*wait, o.MaxPoll)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// unfinished reports whether the live file ends in a line not finished
// yet (its writer may still be writing it).
func (r *reader) unfinished() bool { return r.f != nil && r.live && r.cur.partial > 0 }

// Report is what Verify found.
type Report struct {
	Path   string
	Sealed []string // the sealed files read before the live one
	Size   int64    // bytes in all files
	Lines  int64    // positions in the journal, a final unterminated line included
	Valid  int64    // last journalSequence before the first problem
	// Prefix is the byte offset of the first problem in Blocked.Path (the
	// live file's size when clean).
	Prefix      int64
	Blocked     *BlockedError // the first bad line no record covers; nil when clean
	Quarantined []Quarantined // ranges skipped, as their records say
	// ByClass counts every bad line no record covers, each judged on its
	// own at its position.
	ByClass map[event.Class]int64
}

// Clean reports whether every line is valid or quarantined.
func (r Report) Clean() bool { return r.Blocked == nil }

// Verify reads the whole journal (sealed files, then the live one), taking
// no lock, and judges every line at its position (a final line without
// newline is waited for as in Read). It ignores the checkpoint.
//
// Outcomes: a Report and nil (the Report says whether the journal is
// clean); an error wrapping fs.ErrNotExist; an *fs.PathError wrapping
// ErrSymlink or ErrNotRegular; an I/O error.
func Verify(path string) (Report, error) {
	rep := Report{Path: path, ByClass: map[event.Class]int64{}}
	if _, err := openCheck(path); err != nil {
		return rep, err
	}
	files, err := sealedFiles(path)
	if err != nil {
		return rep, err
	}
	check := func(p string, live bool) error {
		f, err := openRead(p)
		if err != nil {
			return err
		}
		defer f.Close()
		// Each file is numbered from its own segment-start record (0
		// without one), as writers number it.
		c := cursor{path: p, f: f}
		c.pos = peekBase(f)
		var w tailWait
		for {
			size, err := fileSize(f)
			if err != nil {
				return err
			}
			final := !live
			err = c.run(size, final, linereader.DefaultMaxBytes, func(rec event.Record, raw []byte, ctl *controlDetails) error {
				if ctl != nil && ctl.Journal.Quarantined != nil && c.resolving {
					rep.Quarantined = append(rep.Quarantined, *ctl.Journal.Quarantined)
				}
				if rep.Blocked == nil {
					rep.Valid = rec.JournalSequence
				}
				return nil
			})
			var be *BlockedError
			if errors.As(err, &be) {
				rep.ByClass[be.Class]++
				if rep.Blocked == nil {
					rep.Blocked, rep.Prefix = be, be.Offset
				}
				c.off, c.pos = be.Offset+be.size, be.Line // judge the rest on its own
				continue
			}
			if err != nil {
				return err
			}
			if c.partial > 0 {
				if !w.torn(path, c.off) {
					time.Sleep(time.Millisecond)
					continue
				}
				live = false // now the unfinished line is judged as truncated
				continue
			}
			rep.Size += size
			if rep.Blocked == nil && p == path {
				rep.Prefix = size
			}
			rep.Lines = c.pos
			return nil
		}
	}
	for _, s := range files {
		rep.Sealed = append(rep.Sealed, s.path)
		if err := check(s.path, false); err != nil {
			return rep, err
		}
	}
	if err := check(path, true); err != nil {
		return rep, err
	}
	return rep, nil
}
