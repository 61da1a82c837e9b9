package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/jsonl"
)

// ClassNonMonotonic is the class of a line whose journalSequence is missing
// or differs from its 1-based position.
const ClassNonMonotonic jsonl.Class = "non-monotonic"

// BlockedError is the first bad line of a journal: nothing may be appended
// after it until `lcwrap journal repair` moves it aside.
type BlockedError struct {
	Path   string
	Line   int64       // 1-based line number
	Offset int64       // byte offset of the line's first byte
	Class  jsonl.Class // a jsonl class or ClassNonMonotonic
	Reason string      // redacted, one line
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("journal %s is append-blocked at line %d (byte %d): %s: %s; run 'lcwrap journal repair' to move the bad tail aside",
		e.Path, e.Line, e.Offset, e.Class, e.Reason)
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

// openRead opens a journal for reading, never through a symlink.
func openRead(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, journalPathError("open journal", path, err)
	}
	return f, nil
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

// lineSource reads a journal from its start; an unfinished final line is
// waited for (see tailWait) and then returned as truncated.
type lineSource struct {
	path string
	lr   *jsonl.LineReader
	w    tailWait
}

func newLineSource(path string, f *os.File) *lineSource {
	lr := jsonl.NewLineReader(f, jsonl.DefaultMaxLineBytes)
	lr.Follow = true
	return &lineSource{path: path, lr: lr}
}

func (s *lineSource) next() (jsonl.Line, error) {
	for {
		l, err := s.lr.Next()
		if !errors.Is(err, io.EOF) || s.lr.Buffered() == 0 {
			return l, err
		}
		if s.w.torn(s.path, s.lr.Offset()) {
			s.lr.Follow = false // now Next reports it as truncated
			continue
		}
		time.Sleep(time.Millisecond)
	}
}

// Scan calls fn for each valid line of the journal at path whose
// journalSequence is greater than after, in order. raw is the line as
// stored, without its newline, valid only during the call. Scan takes no
// lock; a final line without newline is waited for briefly while a writer
// holds the lock, then treated as truncated.
//
// Outcomes: nil after the last line; fn's error as it is; a *BlockedError
// (wrapping ErrBlocked) at the first bad line, after fn has seen every valid
// line before it; an error wrapping fs.ErrNotExist when there is no journal;
// an *fs.PathError wrapping ErrSymlink when the path is a symlink; other I/O
// errors wrapped with the path.
func Scan(path string, after int64, fn func(rec jsonl.Record, raw []byte) error) error {
	f, err := openRead(path)
	if err != nil {
		return err
	}
	defer f.Close()
	src := newLineSource(path, f)
	for {
		l, err := src.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal %s: %w", path, err)
		}
		rec, be := checkLine(path, l, l.Number)
		if be != nil {
			return be
		}
		if rec.JournalSequence > after {
			if err := fn(rec, l.Bytes); err != nil {
				return err
			}
		}
	}
}

// Follow is Scan that keeps going: after the last line it looks for new
// ones every 50 ms (polling: it works on every file system, sees a
// truncation as plainly as an append, and costs one fstat per look) until
// ctx is done. It reads only whole lines and never keeps a partial one
// between looks, so a concurrent `journal repair` that cuts a bad tail
// leaves it reading on from the repaired end. At a bad line it calls
// onBlocked (when not nil) once and waits for a repair. A journal that does
// not exist yet is waited for; one replaced by another file is read from
// its start.
//
// Outcomes: ctx.Err() when ctx is done; fn's error as it is; an error when
// the journal shrank below lines already read (something other than lcwrap
// rewrote it); an *fs.PathError wrapping ErrSymlink; other I/O errors.
func Follow(ctx context.Context, path string, after int64, fn func(rec jsonl.Record, raw []byte) error, onBlocked func(*BlockedError)) error {
	fl := follower{path: path, seen: after, fn: fn, onBlocked: onBlocked}
	defer fl.close()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		if err := fl.look(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

type follower struct {
	path      string
	seen      int64 // highest journalSequence handed to fn (or the cursor)
	fn        func(jsonl.Record, []byte) error
	onBlocked func(*BlockedError)

	f        *os.File
	off, pos int64 // end of the lines read, and their count
	reported *BlockedError
	w        tailWait
}

func (fl *follower) close() {
	if fl.f != nil {
		fl.f.Close()
	}
}

// look reads whatever whole lines were appended since the last look.
func (fl *follower) look() error {
	if fl.f != nil {
		pfi, err := os.Lstat(fl.path)
		ffi, ferr := fl.f.Stat()
		if err != nil || ferr != nil || !os.SameFile(pfi, ffi) {
			fl.close()
			fl.f, fl.off, fl.pos, fl.seen = nil, 0, 0, 0 // a new journal: read it all
		}
	}
	if fl.f == nil {
		f, err := openRead(fl.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fl.f = f
	}
	fi, err := fl.f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size < fl.off {
		return fmt.Errorf("journal %s shrank to %d bytes, below the %d bytes already read: something other than lcwrap rewrote it; start again", fl.path, size, fl.off)
	}
	if size == fl.off {
		return nil
	}
	lr := jsonl.NewLineReader(io.NewSectionReader(fl.f, fl.off, size-fl.off), jsonl.DefaultMaxLineBytes)
	lr.SetOffset(fl.off, fl.pos)
	lr.Follow = true
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			if lr.Buffered() > 0 && fl.w.torn(fl.path, fl.off) {
				fl.block(&BlockedError{Path: fl.path, Line: fl.pos + 1, Offset: fl.off, Class: jsonl.ClassTruncated,
					Reason: fmt.Sprintf("final line has no newline (%d bytes): a torn or unfinished write", lr.Buffered())})
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal %s: %w", fl.path, err)
		}
		rec, be := checkLine(fl.path, l, fl.pos+1)
		if be != nil {
			fl.block(be)
			return nil
		}
		fl.off, fl.pos = l.Offset+l.Size, fl.pos+1
		if rec.JournalSequence > fl.seen {
			fl.seen = rec.JournalSequence
			if err := fl.fn(rec, l.Bytes); err != nil {
				return err
			}
		}
	}
}

// block reports a bad line once.
func (fl *follower) block(be *BlockedError) {
	if fl.reported != nil && fl.reported.Offset == be.Offset && fl.reported.Class == be.Class {
		return
	}
	fl.reported = be
	if fl.onBlocked != nil {
		fl.onBlocked(be)
	}
}

// Report is what Verify found.
type Report struct {
	Path    string
	Size    int64         // bytes in the file
	Lines   int64         // lines in the file, a final unterminated one included
	Valid   int64         // lines in the valid prefix (= its last journalSequence)
	Prefix  int64         // bytes in the valid prefix
	Blocked *BlockedError // the first bad line; nil when the journal is clean
	// ByClass counts every bad line of the file, each judged on its own at
	// its position.
	ByClass map[jsonl.Class]int64
}

// Clean reports whether every line is valid.
func (r Report) Clean() bool { return r.Blocked == nil }

// Verify reads the whole journal, taking no lock, and judges every line at
// its position (a final line without newline is waited for as in Scan). It
// ignores the checkpoint.
//
// Outcomes: a Report and nil (the Report says whether the journal is clean);
// an error wrapping fs.ErrNotExist; an *fs.PathError wrapping ErrSymlink; an
// I/O error.
func Verify(path string) (Report, error) {
	r := Report{Path: path, ByClass: map[jsonl.Class]int64{}}
	f, err := openRead(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	src := newLineSource(path, f)
	for {
		l, err := src.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r, fmt.Errorf("journal %s: %w", path, err)
		}
		r.Lines = l.Number
		r.Size = l.Offset + l.Size
		if _, be := checkLine(path, l, l.Number); be != nil {
			r.ByClass[be.Class]++
			if r.Blocked == nil {
				r.Blocked = be
			}
			continue
		}
		if r.Blocked == nil {
			r.Valid, r.Prefix = l.Number, r.Size
		}
	}
	return r, nil
}
