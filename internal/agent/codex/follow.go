package codex

import (
	"bytes"
	"context"
	"io"
	"os"
	"time"
)

// maxLine bounds one line of codex's output or rollout that lcwrap reads;
// a longer one is skipped whole and counted (a rollout's session_meta
// carries codex's instructions, tens of KiB).
const maxLine = 1 << 20

// Lines splits a byte stream into lines for fn, without the newline.
// A line longer than maxLine is not passed on: Oversized counts it.
// Lines never copies what it was given more than once per line.
type Lines struct {
	fn        func([]byte)
	buf       []byte
	skipping  bool
	Oversized int
}

// NewLines returns a splitter calling fn for each complete line.
func NewLines(fn func([]byte)) *Lines { return &Lines{fn: fn} }

// Write takes the next bytes; it never fails.
func (l *Lines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !l.skipping {
				l.buf = append(l.buf, p...)
				if len(l.buf) > maxLine {
					l.buf, l.skipping = l.buf[:0], true
					l.Oversized++
				}
			}
			break
		}
		switch {
		case l.skipping:
			l.skipping = false
		case len(l.buf) > 0:
			l.buf = append(l.buf, p[:i]...)
			if len(l.buf) > maxLine {
				l.Oversized++
			} else {
				l.fn(l.buf)
			}
			l.buf = l.buf[:0]
		case i > maxLine:
			l.Oversized++
		default:
			l.fn(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

// Partial reports whether an unfinished line is held (or being skipped).
func (l *Lines) Partial() bool { return len(l.buf) > 0 || l.skipping }

// Follow reads path from its start and passes every complete line to fn;
// it polls for more every poll until ctx is done, then reads what was
// appended up to that moment and returns. It returns the error of opening
// or reading the file; a file that shrinks is read again from where it
// now ends (codex only appends). A final line without its newline is not
// passed on (l.Partial says so).
func Follow(ctx context.Context, path string, poll time.Duration, l *Lines) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		for {
			n, err := f.Read(buf)
			l.Write(buf[:n])
			if err == io.EOF || n == 0 {
				break
			}
			if err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			for {
				n, err := f.Read(buf)
				l.Write(buf[:n])
				if err != nil || n == 0 {
					return nil
				}
			}
		case <-time.After(poll):
		}
	}
}
