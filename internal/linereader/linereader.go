// Package linereader splits a byte stream into lines with bounded memory.
//
// It promises every byte accounted for: each line comes back with its
// 1-based number, its byte offset and the bytes it occupies, so a reader
// can resume at any line's end. A line longer than the cap is reported as
// oversized (its first bytes kept) and reading goes on after it; a line
// that is not valid UTF-8 and a final line without a newline are reported
// as such, never dropped. With Follow set, a partial final line waits for
// more input (a file still being written).
//
// It refuses to judge what a line says: whether a line is JSON, an event
// or true is for the event core (internal/event) and its readers.
package linereader

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// DefaultMaxBytes is the default line cap (64 KiB).
const DefaultMaxBytes = 64 << 10

// OversizedKeep is how much of an oversized line is kept for diagnostics.
const OversizedKeep = 8 << 10

// Line is one line of input.
type Line struct {
	Number int64 // 1-based line number
	Offset int64 // byte offset of the line's first byte
	Size   int64 // bytes the line occupies, its newline included when present
	// Bytes is the line without its newline. For an oversized line it holds
	// only the first bytes. It is valid until the next call to Next.
	Bytes []byte
	// Problem is empty for a complete, valid UTF-8 line within the cap, or
	// one of Oversized, InvalidUTF8, Truncated.
	Problem Problem
}

// Problem names what is wrong with a line, or is empty.
type Problem string

// The problems a line can have.
const (
	Oversized   Problem = "oversized"    // longer than the line cap
	InvalidUTF8 Problem = "invalid-utf8" // not valid UTF-8
	Truncated   Problem = "truncated"    // final line without a newline
)

// Reader splits a stream into lines with bounded memory. Unlike
// bufio.Scanner it keeps going after an oversized line.
type Reader struct {
	r      io.Reader
	max    int
	buf    []byte
	start  int   // first unread byte in buf
	end    int   // end of buffered data
	offset int64 // stream offset of buf[start]
	number int64
	// Follow makes a partial final line wait for more input instead of
	// being reported as truncated: Next returns io.EOF and keeps the bytes,
	// and a later Next reads again (for files that are still growing).
	Follow bool
	keep   []byte // first bytes of an oversized line
}

// New reads lines from r, reporting lines longer than
// maxLineBytes (DefaultMaxBytes when <= 0) as oversized.
func New(r io.Reader, maxLineBytes int) *Reader {
	if maxLineBytes <= 0 {
		maxLineBytes = DefaultMaxBytes
	}
	size := 256 << 10
	if maxLineBytes+1 > size {
		size = maxLineBytes + 1
	}
	return &Reader{r: r, max: maxLineBytes, buf: make([]byte, size)}
}

// SetOffset declares the stream offset of the next byte r will return and
// the number of lines before it, for a reader started mid-file.
func (lr *Reader) SetOffset(offset, lines int64) {
	lr.offset = offset
	lr.number = lines
}

// Offset is the stream offset just after the last line returned.
func (lr *Reader) Offset() int64 { return lr.offset }

// Buffered is the number of bytes read from the stream but not yet returned.
func (lr *Reader) Buffered() int { return lr.end - lr.start }

// Next returns the next line. At the end of input it returns io.EOF; a
// read error is returned as it is. Next never panics on any input.
func (lr *Reader) Next() (Line, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
			if i > lr.max {
				return lr.oversized(i, true), nil
			}
			return lr.take(i, i+1, ""), nil
		}
		if lr.end-lr.start > lr.max {
			return lr.skipOversized()
		}
		n, err := lr.fill()
		if n > 0 {
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			return Line{}, err
		}
		if lr.start == lr.end || lr.Follow {
			return Line{}, io.EOF
		}
		rest := lr.end - lr.start
		return lr.take(rest, rest, Truncated), nil
	}
}

// take returns the line of n content bytes, consuming size bytes.
func (lr *Reader) take(n, size int, problem Problem) Line {
	b := lr.buf[lr.start : lr.start+n]
	if problem == "" && !utf8.Valid(b) {
		problem = InvalidUTF8
	}
	lr.number++
	l := Line{Number: lr.number, Offset: lr.offset, Size: int64(size), Bytes: b, Problem: problem}
	lr.start += size
	lr.offset += int64(size)
	return l
}

// oversized returns a line of n content bytes that lies wholly in the buffer.
func (lr *Reader) oversized(n int, newline bool) Line {
	size := n
	if newline {
		size++
	}
	keep := n
	if keep > OversizedKeep {
		keep = OversizedKeep
	}
	lr.keep = append(lr.keep[:0], lr.buf[lr.start:lr.start+keep]...)
	lr.number++
	l := Line{Number: lr.number, Offset: lr.offset, Size: int64(size), Bytes: lr.keep, Problem: Oversized}
	lr.start += size
	lr.offset += int64(size)
	return l
}

// skipOversized discards a line longer than the buffer up to its newline,
// keeping its first bytes for diagnostics.
func (lr *Reader) skipOversized() (Line, error) {
	lr.keep = lr.keep[:0]
	lr.number++
	l := Line{Number: lr.number, Offset: lr.offset, Problem: Oversized}
	for {
		window := lr.buf[lr.start:lr.end]
		i := bytes.IndexByte(window, '\n')
		seg := window
		if i >= 0 {
			seg = window[:i]
		}
		if room := OversizedKeep - len(lr.keep); room > 0 {
			lr.keep = append(lr.keep, seg[:min(room, len(seg))]...)
		}
		if i >= 0 {
			l.Size += int64(i + 1)
			lr.start += i + 1
			break
		}
		l.Size += int64(len(window))
		lr.start, lr.end = 0, 0
		n, err := lr.fill()
		if n > 0 || err == nil {
			continue
		}
		// The oversized line is also the last one, or reading failed.
		l.Bytes = lr.keep
		lr.offset += l.Size
		if !errors.Is(err, io.EOF) {
			return l, err
		}
		return l, nil
	}
	l.Bytes = lr.keep
	lr.offset += l.Size
	return l, nil
}

// fill compacts the buffer and reads more input.
func (lr *Reader) fill() (int, error) {
	if lr.start > 0 {
		copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.end -= lr.start
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		return 0, nil // full: the caller sees an oversized line
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	return n, err
}
