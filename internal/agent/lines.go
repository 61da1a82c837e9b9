package agent

import (
	"bytes"
	"sync"
)

// MaxLine bounds one line a LineTap passes on; a longer one is skipped and
// counted.
const MaxLine = 4 << 20

// LineTap is an io.Writer that is given a copy of an agent's output as it
// passes through and hands each whole line (without its newline) to a
// function; it never fails, changes or delays the stream. It is safe for
// concurrent use.
type LineTap struct {
	mu       sync.Mutex
	fn       func([]byte)
	buf      []byte
	skipping bool
	skipped  int64
}

// NewLineTap returns a LineTap calling fn for each line.
func NewLineTap(fn func([]byte)) *LineTap { return &LineTap{fn: fn} }

// Write implements io.Writer; it always takes all of p.
func (l *LineTap) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.keep(p)
			break
		}
		l.keep(p[:i])
		if l.skipping {
			l.skipped++
		} else {
			l.fn(l.buf)
		}
		l.buf, l.skipping = l.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (l *LineTap) keep(p []byte) {
	if l.skipping {
		return
	}
	if len(l.buf)+len(p) > MaxLine {
		l.buf, l.skipping = l.buf[:0], true
		return
	}
	l.buf = append(l.buf, p...)
}

// Flush passes on a last line that has no newline, and returns how many
// lines were skipped as too long.
func (l *LineTap) Flush() (skipped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 && !l.skipping {
		l.fn(l.buf)
	}
	if l.skipping {
		l.skipped++
	}
	l.buf, l.skipping = l.buf[:0], false
	return l.skipped
}
