package supervise

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/jsonl"
)

// How a Stream shares a stream between the child and event lines.
const (
	// holdPartial is how long a child's unfinished line is held back, so
	// that an event arriving meanwhile can go out first; a prompt still
	// appears after this long.
	holdPartial = 20 * time.Millisecond
	// lineWait is how long an event waits for the child to end a line it
	// has started; after that lcwrap ends the line itself.
	lineWait = 500 * time.Millisecond
	// maxHeld bounds the bytes of a partial line held back.
	maxHeld = 64 << 10
	// DrainWait bounds how long Run keeps copying a stream after the main
	// child has ended: processes it left behind may hold the stream open.
	DrainWait = 250 * time.Millisecond
)

// Stream interposes on one of lcwrap's output streams (its stdout or
// stderr) when event lines share it with the child's output. The child
// writes into a pipe (ChildFile); a goroutine copies its bytes to the real
// stream unchanged and in order. Complete lines go out at once; the tail
// of an unfinished line is held for a few milliseconds. An event line
// goes out at once when the child is between lines, and otherwise waits
// for the child's newline; only if the line stays open (lineWait), or
// when the child's output has ended, does lcwrap end the line with '\n'
// first. Each event line is one write.
//
// If the real stream fails (a closed pipe), the child's end of the pipe
// is closed too, so the child sees the broken pipe it would have seen
// without lcwrap; event writes then return the error.
type Stream struct {
	name string
	out  io.Writer
	r, w *os.File
	done chan struct{} // closed when copying has stopped

	hold, wait time.Duration

	mu         sync.Mutex
	held       []byte      // child bytes of an unfinished line, not yet written
	midLine    bool        // the last byte written was not a newline
	pending    [][]byte    // event lines waiting for the child's newline
	holdTimer  *time.Timer // writes the held bytes (armed while held)
	waitTimer  *time.Timer // ends the open line (armed while pending)
	holdArmed  bool
	waitArmed  bool
	eof        bool // the child's output has ended (or copying stopped)
	closed     bool
	err        error // the first write error on out
	errShown   bool  // err has been returned to a writer
	childEnded bool  // closeChildEnd ran
}

// NewStream starts interposing on out (named "stdout" or "stderr" in
// warnings). It fails only when a pipe cannot be made.
func NewStream(name string, out io.Writer) (*Stream, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s := &Stream{name: name, out: out, r: r, w: w, done: make(chan struct{}), hold: holdPartial, wait: lineWait}
	s.holdTimer = time.AfterFunc(time.Hour, s.onHold)
	s.holdTimer.Stop()
	s.waitTimer = time.AfterFunc(time.Hour, s.onWait)
	s.waitTimer.Stop()
	go s.copy()
	return s, nil
}

// ChildFile is the write end of the pipe: give it to the child as its
// stdout or stderr.
func (s *Stream) ChildFile() *os.File { return s.w }

// Sink returns the event sink writing to this stream.
func (s *Stream) Sink() emit.Sink { return streamSink{s} }

// Lines returns a writer for lcwrap's own messages: each Write is treated
// as one line, placed like an event line.
func (s *Stream) Lines() io.Writer { return lineWriter{s} }

// Close writes whatever is still held or pending, stops copying and
// releases the pipe. It returns a write error not yet returned to a
// writer. Closing twice is harmless.
func (s *Stream) Close() error {
	s.closeChildEnd()
	s.mu.Lock()
	s.holdTimer.Stop()
	s.waitTimer.Stop()
	if !s.closed {
		s.closed = true
		s.eof = true
		s.flushHeld()
		s.endLine()
	}
	err := s.unshownErr()
	s.mu.Unlock()
	s.r.Close()
	<-s.done
	return err
}

// closeChildEnd closes lcwrap's copy of the child's end, so that the copy
// ends when the child (and whatever inherited the pipe) is gone.
func (s *Stream) closeChildEnd() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.childEnded {
		s.childEnded = true
		s.w.Close()
	}
}

// drain waits until the child's output has ended, or until d has passed
// (something else still holds the pipe): bytes written after that are not
// copied.
func (s *Stream) drain(d time.Duration) {
	s.closeChildEnd()
	if s.r.SetReadDeadline(time.Now().Add(d)) != nil {
		s.r.Close()
	}
	<-s.done
}

func (s *Stream) copy() {
	defer close(s.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			s.child(buf[:n])
		}
		if err != nil {
			break
		}
	}
	s.mu.Lock()
	s.eof = true
	s.holdTimer.Stop()
	s.flushHeld()
	s.endLine()
	s.mu.Unlock()
}

// child takes bytes the child wrote.
func (s *Stream) child(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = append(s.held, p...)
	if i := bytes.LastIndexByte(s.held, '\n'); i >= 0 {
		s.write(s.held[:i+1])
		s.midLine = false
		s.held = s.held[:copy(s.held, s.held[i+1:])]
		s.writePending()
	}
	switch {
	case len(s.held) >= maxHeld:
		s.flushHeld()
	case len(s.held) > 0 && !s.holdArmed:
		s.holdArmed = true
		s.holdTimer.Reset(s.hold)
	}
}

// writeLine writes one line of lcwrap's own (an event).
func (s *Stream) writeLine(line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return s.shownErr()
	case s.closed:
		return ErrStreamClosed
	case s.midLine && !s.eof:
		s.pending = append(s.pending, bytes.Clone(line))
		if !s.waitArmed {
			s.waitArmed = true
			s.waitTimer.Reset(s.wait)
		}
		return nil
	case s.midLine:
		s.write([]byte{'\n'})
		s.midLine = false
	}
	s.write(line)
	if s.err != nil {
		return s.shownErr()
	}
	return nil
}

func (s *Stream) onHold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdArmed = false
	s.flushHeld()
}

func (s *Stream) onWait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitArmed = false
	s.flushHeld()
	s.endLine()
}

// flushHeld writes the held part of an unfinished line.
func (s *Stream) flushHeld() {
	if len(s.held) == 0 {
		return
	}
	s.write(s.held)
	s.held = s.held[:0]
	s.midLine = true
}

// endLine ends the child's open line for pending event lines.
func (s *Stream) endLine() {
	if len(s.pending) == 0 {
		return
	}
	if s.midLine {
		s.write([]byte{'\n'})
		s.midLine = false
	}
	s.writePending()
}

func (s *Stream) writePending() {
	for _, l := range s.pending {
		s.write(l)
	}
	s.pending = nil
	s.waitTimer.Stop()
	s.waitArmed = false
}

// write writes to the real stream. After the first failure nothing more
// is written, and the child's pipe is closed so that it sees the break.
func (s *Stream) write(p []byte) {
	if s.err != nil {
		return
	}
	if _, err := s.out.Write(p); err != nil {
		s.err = err
		s.r.Close()
	}
}

func (s *Stream) shownErr() error {
	s.errShown = true
	return s.err
}

func (s *Stream) unshownErr() error {
	if s.err == nil || s.errShown {
		return nil
	}
	return s.shownErr()
}

type streamSink struct{ s *Stream }

func (k streamSink) Name() string                                 { return k.s.name }
func (k streamSink) WriteEvent(_ *jsonl.Event, line []byte) error { return k.s.writeLine(line) }
func (k streamSink) Close() error                                 { return k.s.Close() }

type lineWriter struct{ s *Stream }

func (w lineWriter) Write(p []byte) (int, error) {
	line := p
	if len(p) == 0 || p[len(p)-1] != '\n' {
		line = append(bytes.Clone(p), '\n')
	}
	if err := w.s.writeLine(line); err != nil {
		return 0, err
	}
	return len(p), nil
}
