package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// The classes of damage the reader reports besides the event core's own
// (event.ClassOf) for a body that is not a valid journal line.
const (
	ClassTornLine  = "torn-line"       // part of a gateway line that is not a complete OTLP-JSON request
	ClassOversized = "oversized-line"  // a gateway line longer than the reader's cap
	ClassNoHost    = "no-host"         // a record whose resource has no host.name
	ClassNoBody    = "body-not-string" // a record whose body is not a string
	ClassShrunk    = "file-shrunk"     // a gateway file became shorter: it was truncated
)

// DefaultMaxLineBytes caps one gateway line (one export request).
const DefaultMaxLineBytes = 64 << 20

// Item is one log record of the gateway's output, or one part of a line
// that holds none. Exactly one of Event and Damage is set. An item, and
// its Body, are valid until the callback it was given to returns (the
// reader fills the same one for the next record: copy what you keep);
// its Event (unless Reader.ReuseEvent) and Damage are the callback's to
// keep.
type Item struct {
	Cursor Cursor
	Path   string // the file's path when it was read
	// Host is the resource's host.name ("" when it has none: then Damage
	// is set); HostID its host.id, "" when absent.
	Host, HostID string
	// ObservedNs is when the host's file_log receiver read the line, on
	// the host's clock; ReceivedNs when the gateway received it, on the
	// gateway's clock (its AttrReceivedAt stamp). Unix nanoseconds, 0 when
	// the record does not say.
	ObservedNs, ReceivedNs int64
	// Body is the journal line the record carries; valid until the
	// callback returns.
	Body            []byte
	Event           *event.Event
	JournalSequence int64
	// Control says Event is one of the journal's own records (a segment
	// start, a quarantine record): lcwrap's journal readers act on those
	// instead of showing them as a child's events, and so does the fleet.
	Control bool
	Damage  *Damage
	// Before says the record is at or before the cursor the reader was
	// started after (it is read to learn what was seen, not to be shown).
	Before bool
}

// Damage is a part of the output that is not an event: a torn gateway
// line, a record without a host, a body that is not a journal line.
// Records carry their host when they have one; a whole line has none.
type Damage struct {
	Host   string `json:"host"`
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	// Index is the record's position in its line; for a part of a line
	// that is not an OTLP-JSON request, the position it takes.
	Index  int    `json:"index"`
	Class  string `json:"class"`
	Reason string `json:"reason"`
	Text   string `json:"text,omitempty"` // redacted, cut
}

// Pending is a last line of a live file still being written: it is waited
// for, never read as damage.
type Pending struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
}

// ErrCursorNotFound means no file of the output has the cursor's
// fingerprint: its file was removed, or the cursor is another output's.
var ErrCursorNotFound = errors.New("the cursor's file is not in the gateway output")

// ErrManyLive means a cursor was given but the output holds several files
// being written: a cursor orders one gateway's files only.
var ErrManyLive = errors.New("a fleet cursor orders the files of one gateway, and PATH holds several being written")

// Reader reads a gateway's output: PATH a file, a directory (every file in
// it, rotated ones included) or a glob. Each Pass reads what was appended
// since the last one, file by file in the order they were written; a file
// renamed by rotation is followed by its inode. It is not safe for
// concurrent use.
type Reader struct {
	src   *source
	files map[fileKey]*fileState
	// MaxLineBytes caps a gateway line (DefaultMaxLineBytes when 0).
	MaxLineBytes int
	// ReuseEvent makes each Item's Event the reader's, filled anew for
	// the next record like the Item: for a caller that keeps nothing of
	// it (a Fleet does not), one event less to allocate per record.
	ReuseEvent bool

	after    *Cursor
	afterKey fileKey
	resolved bool
	passed   bool

	pending []Pending
	buf     []byte
	br      *bufio.Reader // reused by every read: a pass costs no buffer
	dec     fastDecoder   // and by every line: its records, their bodies
	item    Item          // the item handed to fn, filled anew for each record
	ev      event.Event   // its event, with ReuseEvent
}

type fileState struct {
	key        fileKey
	name, path string
	sealed     bool
	f          *os.File
	off        int64 // start of the next unread line
	head       []byte
	fullFP     uint64 // the fingerprint of a full head, once computed
	hasFullFP  bool
	done       bool
	gone       bool // no longer listed
}

// NewReader returns a reader of the output at path. Outcomes: ErrNoOutput
// (wrapped) when path names nothing; an error for a bad glob or a path
// that is neither a file nor a directory.
func NewReader(path string) (*Reader, error) {
	src, err := newSource(path)
	if err != nil {
		return nil, err
	}
	return &Reader{src: src, files: map[fileKey]*fileState{}}, nil
}

// After makes the reader mark every record up to and including c as
// Before. Call it before the first Pass.
func (r *Reader) After(c Cursor) { r.after = &c }

// Pending returns the partly written last lines found by the last Pass.
func (r *Reader) Pending() []Pending { return r.pending }

// Close closes the files the reader holds open.
func (r *Reader) Close() error {
	for _, st := range r.files {
		if st.f != nil {
			st.f.Close()
			st.f = nil
		}
	}
	return nil
}

// Pass reads everything appended since the last pass and calls fn for
// each item in order. It stops at fn's first error and returns it.
// Outcomes: nil; ErrCursorNotFound or ErrManyLive on the first pass after
// After; a listing or read error.
func (r *Reader) Pass(fn func(*Item) error) error {
	list, err := r.src.list()
	if err != nil {
		return err
	}
	order := make([]*fileState, 0, len(list))
	present := make(map[fileKey]bool, len(list))
	for _, l := range list {
		present[l.key] = true
		st := r.files[l.key]
		if st == nil {
			st = &fileState{key: l.key}
			r.files[l.key] = st
		}
		st.name, st.path = l.name, l.path
		st.sealed = st.sealed || l.sealed
		order = append(order, st)
	}
	// A file that left the listing (renamed out of a glob, removed) is
	// read to its end through the descriptor still open, then let go.
	var gone []*fileState
	for k, st := range r.files {
		if !present[k] && !st.done {
			st.sealed, st.gone = true, true
			gone = append(gone, st)
		}
	}
	order = append(gone, order...)

	if r.after != nil && !r.resolved {
		if err := r.resolve(list); err != nil {
			return err
		}
	}
	r.pending = r.pending[:0]
	for _, st := range order {
		if st.done {
			continue
		}
		if err := r.read(st, fn); err != nil {
			return err
		}
		if r.after != nil && st.key == r.afterKey {
			r.passed = true
		}
	}
	return nil
}

// Watch returns a watch on the directory of the output's files
// (journal.WatchDir): a follower waits on it between passes instead of
// looking again and again. It is nil where there is none — a glob whose
// directory part is a pattern too, a system without such watches — and
// the follower polls then.
func (r *Reader) Watch(ctx context.Context) *journal.DirWatch {
	dir := r.src.path
	if r.src.kind != kindDir {
		dir = filepath.Dir(dir)
	}
	if r.src.kind == kindGlob && strings.ContainsAny(dir, "*?[\\") {
		return nil
	}
	// Every file of the directory: a rotation renames the live file to a
	// name a glob may not match, and a spurious pass costs little.
	return journal.WatchDir(ctx, dir, func(string) bool { return true })
}

// Follow runs passes every interval until ctx is done. Outcomes: ctx's
// error, or the first error of a pass.
func (r *Reader) Follow(ctx context.Context, interval time.Duration, fn func(*Item) error, idle func() error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := r.Pass(fn); err != nil {
			return err
		}
		if idle != nil {
			if err := idle(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// resolve finds the cursor's file by its fingerprint, preferring the file
// of its name.
func (r *Reader) resolve(list []*listed) error {
	c := *r.after
	live := 0
	for _, l := range list {
		if !l.sealed {
			live++
		}
	}
	if live > 1 {
		return fmt.Errorf("%w (%d)", ErrManyLive, live)
	}
	cands := make([]*listed, 0, len(list))
	for _, l := range list {
		if l.name == c.File {
			cands = append([]*listed{l}, cands...)
		} else {
			cands = append(cands, l)
		}
	}
	for _, l := range cands {
		if ok, err := matches(l.path, c); err != nil {
			return err
		} else if ok {
			r.afterKey, r.resolved = l.key, true
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrCursorNotFound, c)
}

// matches reports whether the file at path holds the cursor's line: its
// first bytes have the cursor's fingerprint.
func matches(path string, c Cursor) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, fpMax)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	head = head[:n]
	if c.Offset >= int64(len(head)) {
		return len(head) == fpMax && fingerprint(head) == c.FP, nil
	}
	end := int64(len(head))
	if i := bytes.IndexByte(head[c.Offset:], '\n'); i >= 0 {
		end = c.Offset + int64(i)
	}
	return fingerprint(head[:fpLen(end)]) == c.FP, nil
}

// read reads one file from its offset to its last complete line.
func (r *Reader) read(st *fileState, fn func(*Item) error) error {
	if st.f == nil {
		f, err := os.Open(st.path)
		if errors.Is(err, fs.ErrNotExist) {
			st.done = st.gone // gone before it was ever opened; else a race with rotation
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		if k := keyOf(fi); k != (fileKey{}) && k != st.key {
			f.Close() // rotated between the listing and now: next pass
			return nil
		}
		st.f = f
	}
	fi, err := st.f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size < st.off {
		d := &Damage{File: st.name, Offset: size, Index: -1, Class: ClassShrunk,
			Reason: fmt.Sprintf("the file shrank from %d to %d bytes: it was truncated (a file exporter without rotation truncates at start), so records may have been lost; read again from its start", st.off, size)}
		st.off, st.head, st.hasFullFP = 0, nil, false
		if err := fn(&Item{Cursor: Cursor{File: st.name, Offset: size, FP: fingerprint(nil)}, Path: st.path, Damage: d, Before: r.isBefore(st, size, 0)}); err != nil {
			return err
		}
	}
	if len(st.head) < fpMax && size > int64(len(st.head)) {
		h := make([]byte, min(size, fpMax))
		n, err := st.f.ReadAt(h, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		st.head = h[:n]
	}
	if r.br == nil {
		r.br = bufio.NewReaderSize(nil, 256<<10)
	}
	br := r.br
	br.Reset(io.NewSectionReader(st.f, st.off, size-st.off))
	defer br.Reset(nil) // keep no file
	max := r.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	for {
		line, n, complete, over, err := r.readLine(br, max)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if !complete && !st.sealed {
			r.pending = append(r.pending, Pending{File: st.name, Offset: st.off, Bytes: n})
			break
		}
		off := st.off
		st.off += n
		if over {
			d := &Damage{File: st.name, Offset: off, Index: -1, Class: ClassOversized,
				Reason: fmt.Sprintf("a gateway line of more than %d bytes was skipped", max), Text: event.DiagnosticText(line, redact.Text)}
			if err := fn(&Item{Cursor: r.cursor(st, off, 0, off+n), Path: st.path, Damage: d, Before: r.isBefore(st, off, 0)}); err != nil {
				return err
			}
			continue
		}
		if err := r.line(st, off, line, fn); err != nil {
			return err
		}
	}
	if st.sealed {
		st.done, st.head = true, nil
		st.f.Close()
		st.f = nil
	}
	return nil
}

// readLine returns the next line without its newline, the bytes it takes
// (newline included), whether it ended with a newline, and whether it was
// longer than max (then line holds its first bytes only).
func (r *Reader) readLine(br *bufio.Reader, max int) (line []byte, n int64, complete, over bool, err error) {
	chunk, rerr := br.ReadSlice('\n')
	if rerr == nil && len(chunk) <= max+1 {
		// The whole line is in the reader's buffer: no copy (it is
		// valid until the next read, after the line's items).
		return chunk[:len(chunk)-1], int64(len(chunk)), true, false, nil
	}
	r.buf = r.buf[:0]
	for first := true; ; first = false {
		if !first {
			chunk, rerr = br.ReadSlice('\n')
		}
		n += int64(len(chunk))
		if len(r.buf)+len(chunk) <= max+1 {
			r.buf = append(r.buf, chunk...)
		} else {
			over = true
		}
		switch {
		case rerr == nil:
			return bytes.TrimSuffix(r.buf, []byte("\n")), n, true, over, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case errors.Is(rerr, io.EOF):
			return r.buf, n, false, over, nil
		default:
			return nil, 0, false, false, rerr
		}
	}
}

// cursor is the cursor of record idx of the line at off ending at end.
func (r *Reader) cursor(st *fileState, off int64, idx int, end int64) Cursor {
	return Cursor{File: st.name, Offset: off, Index: idx, FP: r.fp(st, end)}
}

// fp is the fingerprint of the cursors of a line ending at end.
func (r *Reader) fp(st *fileState, end int64) uint64 {
	n := min(len(st.head), fpLen(end))
	if n < fpMax {
		return fingerprint(st.head[:n])
	}
	if !st.hasFullFP {
		st.fullFP, st.hasFullFP = fingerprint(st.head[:fpMax]), true
	}
	return st.fullFP
}

func (r *Reader) isBefore(st *fileState, off int64, idx int) bool {
	if r.after == nil || r.passed {
		return false
	}
	if st.key != r.afterKey {
		return true // a file written before the cursor's
	}
	c := r.after
	return off < c.Offset || off == c.Offset && idx <= c.Index
}

// line turns one complete gateway line into items.
func (r *Reader) line(st *fileState, off int64, line []byte, fn func(*Item) error) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil // the newline of a request written just before a rotation
	}
	end := off + int64(len(line))
	fp := r.fp(st, end)
	cur := func(idx int) Cursor { return Cursor{File: st.name, Offset: off, Index: idx, FP: fp} }
	idx := 0
	for _, seg := range r.dec.line(line) {
		if seg.err != nil {
			part := line[seg.at:]
			d := &Damage{File: st.name, Offset: off + int64(seg.at), Index: idx, Class: ClassTornLine,
				Reason: seg.err.Error() + " (a gateway killed while writing leaves one)", Text: event.DiagnosticText(part, redact.Text)}
			if err := fn(&Item{Cursor: cur(idx), Path: st.path, Damage: d, Before: r.isBefore(st, off, idx)}); err != nil {
				return err
			}
			idx++
			continue
		}
		for i := range seg.records {
			rec := &seg.records[i]
			it := &r.item
			*it = Item{Cursor: cur(idx), Path: st.path, Host: rec.host, HostID: rec.hostID,
				ObservedNs: rec.observedNs, ReceivedNs: rec.receivedNs, Body: rec.body, Before: r.isBefore(st, off, idx)}
			damage := func(class, reason string) {
				it.Damage = &Damage{Host: rec.host, File: st.name, Offset: off, Index: idx, Class: class, Reason: reason, Text: event.DiagnosticText(rec.body, redact.Text)}
			}
			switch {
			case rec.host == "":
				damage(ClassNoHost, "the record's resource has no host.name, so no host to hold its child")
			case !rec.bodyString:
				damage(ClassNoBody, "the record's body is not a string, so not a journal line")
			default:
				ev, js, err := event.Parse(rec.body)
				if err != nil {
					damage(string(event.ClassOf(err)), "the body is not a journal line: "+err.Error())
				} else {
					if r.ReuseEvent {
						r.ev = ev
						it.Event = &r.ev
					} else {
						it.Event = new(event.Event)
						*it.Event = ev
					}
					it.JournalSequence = js
					it.Control = journal.IsControl(&event.Record{Event: ev, JournalSequence: js})
				}
			}
			if err := fn(it); err != nil {
				return err
			}
			idx++
		}
	}
	return nil
}
