package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/journal"
	"github.com/lcwrap/lcwrap/jsonl"
)

// How often Follow looks for new lines: soon after lines arrived, then
// less and less often while the journal is quiet, so that an idle view
// costs next to nothing.
const (
	pollMin = 50 * time.Millisecond
	pollMax = time.Second
)

// Follow reads the journal's lines after the cursor, then keeps reading
// what is appended until ctx is done. It reads whole lines only (an
// unfinished last line is read once its newline is there), checks each
// as the journal does (a valid event whose journalSequence is its
// position) and stops at a bad one, reporting it to onBlocked and reading
// on when it has been replaced. A journal replaced by another file is read
// from its start.
//
// Outcomes: ctx.Err() when ctx is done; fn's error; an error when the
// journal shrank below what was read; other I/O errors. A journal that
// does not exist yet is waited for.
func (j JournalLines) Follow(ctx context.Context, after int64, fn func(jsonl.Record, []byte) error, onBlocked func(*journal.BlockedError)) error {
	t := &tail{path: string(j), seen: after, fn: fn, onBlocked: onBlocked}
	defer t.close()
	wait := pollMin
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		n, err := t.look()
		if err != nil {
			return err
		}
		if n > 0 {
			wait = pollMin
		} else {
			wait = min(wait*2, pollMax)
		}
		timer.Reset(wait)
	}
}

type tail struct {
	path      string
	seen      int64
	fn        func(jsonl.Record, []byte) error
	onBlocked func(*journal.BlockedError)

	f        *os.File
	off, pos int64
	reported int64 // offset of the bad line reported, -1 when none
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
	}
}

// look reads the whole lines appended since the last look and says how
// many it read.
func (t *tail) look() (int, error) {
	if t.f != nil {
		pfi, err := os.Lstat(t.path)
		ffi, ferr := t.f.Stat()
		if err != nil || ferr != nil || !os.SameFile(pfi, ffi) {
			t.close()
			t.f, t.off, t.pos, t.seen = nil, 0, 0, 0 // another file: read it all
		}
	}
	if t.f == nil {
		f, err := os.OpenFile(t.path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		t.f, t.reported = f, -1
	}
	fi, err := t.f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if size < t.off {
		return 0, fmt.Errorf("journal %s shrank to %d bytes, below the %d bytes already read", t.path, size, t.off)
	}
	if size == t.off {
		return 0, nil
	}
	lr := jsonl.NewLineReader(io.NewSectionReader(t.f, t.off, size-t.off), jsonl.DefaultMaxLineBytes)
	lr.SetOffset(t.off, t.pos)
	lr.Follow = true // an unfinished last line is left for the next look
	n := 0
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("journal %s: %w", t.path, err)
		}
		pos := t.pos + 1
		ev, js, perr := jsonl.Parse(l.Bytes)
		if l.Problem != "" || perr != nil || js != pos {
			t.block(l, pos, perr, js)
			return n, nil
		}
		t.off, t.pos = l.Offset+l.Size, pos
		n++
		if js > t.seen {
			t.seen = js
			if err := t.fn(jsonl.Record{Line: l, Event: ev, JournalSequence: js}, l.Bytes); err != nil {
				return n, err
			}
		}
	}
}

// block reports a bad line once; reading stays at it.
func (t *tail) block(l jsonl.Line, pos int64, perr error, js int64) {
	if t.reported == l.Offset || t.onBlocked == nil {
		return
	}
	t.reported = l.Offset
	be := &journal.BlockedError{Path: t.path, Line: pos, Offset: l.Offset, Class: l.Problem}
	switch {
	case l.Problem != "":
		be.Reason = string(l.Problem)
	case perr != nil:
		be.Class, be.Reason = jsonl.ClassOf(perr), Cut(Clean(perr.Error()), jsonl.MaxDiagnosticText)
	default:
		be.Class, be.Reason = journal.ClassNonMonotonic, fmt.Sprintf("journalSequence %d at position %d", js, pos)
	}
	t.onBlocked(be)
}
