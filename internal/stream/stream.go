package stream

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
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
	// copyBuffer is the size of the reads from the child.
	copyBuffer = 256 << 10
)

var (
	// ErrClosed is returned for event lines written to a closed Stream,
	// and by Renew on one.
	ErrClosed = errors.New("stream closed")
	// errTeeUnsupported means tee(2) cannot pass a Stream's bytes: it
	// copies them instead.
	errTeeUnsupported = errors.New("tee(2) is not available")
	// errNotPassing means an event sink came to share a stream while its
	// copy waited to pass the child's bytes by tee(2): read them instead.
	errNotPassing = errors.New("the stream is shared now")
)

// Tap sees the child's bytes as they are copied (output activity):
// Write gets each chunk, End the end of the output. It runs on the copy's
// goroutine and must not block.
type Tap interface {
	Write(p []byte)
	End()
}

// Name is the stream's name ("stdout", "stderr").
func (s *Stream) Name() string { return s.name }

// Out is the real stream the child's bytes go to.
func (s *Stream) Out() io.Writer { return s.out }

// Done is closed when copying the current child's output has stopped.
func (s *Stream) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Stream interposes on one of lcwrap's output streams (its stdout or
// stderr) when event lines share it with the child's output, or when Run
// needs to see the child's output (Config.Activity, Config.PTY). The
// child writes into a pipe (ChildFile), or into its pty, whose master the
// Stream then reads; a goroutine copies the child's bytes to the real
// stream unchanged and in order. Without event lines (no Sink, no Lines)
// that is all. With them, complete lines go out at once; the tail of an
// unfinished line is held for a few milliseconds. An event line goes out
// at once when the child is between lines, and otherwise waits for the
// child's newline; only if the line stays open (lineWait), or when the
// child's output has ended, does lcwrap end the line with '\n' first.
// Each event line is one write.
//
// If the real stream fails (a closed pipe), the child's end of the pipe
// is closed too, so the child sees the broken pipe it would have seen
// without lcwrap (a pty is hung up: the child's terminal goes away);
// event writes then return the error.
type Stream struct {
	name string
	out  io.Writer
	r, w *os.File
	done chan struct{} // closed when copying has stopped

	hold, wait time.Duration

	mu         sync.Mutex
	src        *os.File    // what the copy reads: r, or the pty master it follows
	shared     bool        // event lines share the stream (Sink or Lines was called)
	tap        Tap         // the child's lines feed activity (nil: not watched)
	crlf       bool        // out is a raw terminal: lcwrap's own line ends are "\r\n"
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

// New starts interposing on out (named "stdout" or "stderr" in
// warnings). It fails only when a pipe cannot be made.
func New(name string, out io.Writer) (*Stream, error) {
	r, w, err := newPipe()
	if err != nil {
		return nil, err
	}
	s := &Stream{name: name, out: out, r: r, w: w, src: r, done: make(chan struct{}), hold: holdPartial, wait: lineWait}
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
func (s *Stream) Sink() event.Sink {
	s.share()
	return streamSink{s}
}

// Lines returns a writer for lcwrap's own messages: each Write is treated
// as one line, placed like an event line.
func (s *Stream) Lines() io.Writer {
	s.share()
	return lineWriter{s}
}

// share makes the stream place lines of lcwrap's own among the child's.
func (s *Stream) share() {
	s.mu.Lock()
	s.shared = true
	s.mu.Unlock()
}

// Follow makes the stream copy the child's output from src (a pty
// master) instead of its pipe, which the child never gets. Call it
// before the child starts.
func (s *Stream) Follow(src *os.File) {
	src.SetReadDeadline(time.Time{}) // an earlier attempt's drain set one
	s.mu.Lock()
	s.src = src
	s.mu.Unlock()
	s.CloseChildEnd() // the pipe ends, and the copy goes on from src
}

// Watch feeds the child's lines to t.
func (s *Stream) Watch(t Tap) {
	s.mu.Lock()
	s.tap = t
	s.mu.Unlock()
}

// RawTerminal says whether out is a terminal in raw mode, where lcwrap's
// own lines must end with "\r\n" to start the next at the left margin.
func (s *Stream) RawTerminal(raw bool) {
	s.mu.Lock()
	s.crlf = raw
	s.mu.Unlock()
}

// Close writes whatever is still held or pending, stops copying and
// releases the pipe. It returns a write error not yet returned to a
// writer. Closing twice is harmless.
func (s *Stream) Close() error {
	s.CloseChildEnd()
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
	src := s.src
	s.mu.Unlock()
	s.r.Close()
	if src != s.r {
		src.SetReadDeadline(time.Now()) // the pty is not the stream's to close
	}
	<-s.done
	return err
}

// CloseChildEnd closes lcwrap's copy of the child's end, so that the copy
// ends when the child (and whatever inherited the pipe) is gone.
func (s *Stream) CloseChildEnd() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.childEnded {
		s.childEnded = true
		s.w.Close()
	}
}

// Drain waits until the child's output has ended, or until d has passed
// (something else still holds the pipe): bytes written after that are not
// copied.
func (s *Stream) Drain(d time.Duration) {
	s.CloseChildEnd()
	s.mu.Lock()
	src := s.src
	s.mu.Unlock()
	if src.SetReadDeadline(time.Now().Add(d)) != nil {
		src.Close()
	}
	<-s.done
}

// copy copies the child's output until it ends: EOF on the pipe, or EIO
// on a pty master once every copy of the slave is closed (a pty's end of
// output), or any other read error. From pipe to pipe, with no line of
// lcwrap's own to place, the bytes go by tee(2) (see teeRead).
func (s *Stream) copy() {
	defer close(s.done)
	buf := make([]byte, copyBuffer)
	src := s.r
	tee := teeFD(s.out)
	for {
		var n int
		var err error
		if tee >= 0 && src == s.r && s.passThrough() {
			var outErr error
			n, outErr, err = teeRead(src, tee, buf, s.whilePassing)
			switch {
			case err == errTeeUnsupported:
				tee, err = -1, nil
			case err == errNotPassing:
				err = nil // an event sink shares the stream now: read instead
			case outErr != nil:
				s.outFailed(outErr)
			case n > 0:
				s.passed(buf[:n])
			}
		} else {
			n, err = src.Read(buf)
			if n > 0 {
				s.child(buf[:n])
			}
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.sweep(src, buf)
		}
		s.mu.Lock()
		next := s.src
		s.mu.Unlock()
		if next == src {
			break
		}
		src = next // the pipe ended because the stream follows a pty
	}
	s.mu.Lock()
	if s.tap != nil {
		s.tap.End()
	}
	s.eof = true
	s.holdTimer.Stop()
	s.flushHeld()
	s.endLine()
	s.mu.Unlock()
}

// maxSweep bounds what sweep copies (a leftover may write without end).
const maxSweep = 2 << 20

// sweep copies what src holds when drain's deadline has ended the copy:
// bytes written before the deadline that a stalled machine had not let
// the copy read (the deadline is checked before a read, so the copy
// would not see them). It reads without waiting, up to maxSweep bytes; a
// read of a pty master also pushes through what the kernel has not
// handed over to it yet.
func (s *Stream) sweep(src *os.File, buf []byte) {
	rc, err := src.SyscallConn()
	if err != nil {
		return
	}
	for swept := 0; swept < maxSweep; {
		var n int
		var rerr error
		// Only the read runs under Control: a failed write closes src,
		// which waits for Control to be done.
		if rc.Control(func(fd uintptr) { n, rerr = syscall.Read(int(fd), buf) }) != nil {
			return
		}
		switch {
		case n > 0:
			s.child(buf[:n])
			swept += n
		case rerr != syscall.EINTR:
			return
		}
	}
}

// passThrough reports whether the child's bytes may go out as they come:
// no line of lcwrap's own shares the stream, and it has not failed.
func (s *Stream) passThrough() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.shared && s.err == nil
}

// whilePassing runs tee under the stream's lock while the child's bytes
// may still go out as they come, and reports whether it did. Checking
// passThrough before waiting for the child is not enough: a sink may come
// to share the stream while the copy waits, and then the child's bytes
// must be placed around event lines, never passed raw.
func (s *Stream) whilePassing(tee func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shared || s.err != nil {
		return false
	}
	tee()
	return true
}

// passed takes bytes of the child's that are already out (by tee).
func (s *Stream) passed(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tap != nil {
		s.tap.Write(p)
	}
}

// child takes bytes the child wrote.
func (s *Stream) child(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tap != nil {
		s.tap.Write(p)
	}
	if !s.shared {
		s.write(p)
		return
	}
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
	if s.crlf && bytes.HasSuffix(line, []byte{'\n'}) && !bytes.HasSuffix(line, []byte("\r\n")) {
		line = append(line[:len(line)-1:len(line)-1], '\r', '\n')
	}
	switch {
	case s.err != nil:
		return s.shownErr()
	case s.closed:
		return ErrClosed
	case s.midLine && !s.eof:
		s.pending = append(s.pending, bytes.Clone(line))
		if !s.waitArmed {
			s.waitArmed = true
			s.waitTimer.Reset(s.wait)
		}
		return nil
	case s.midLine:
		s.write(s.newline())
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
		s.write(s.newline())
		s.midLine = false
	}
	s.writePending()
}

// newline is how lcwrap ends a line the child left open.
func (s *Stream) newline() []byte {
	if s.crlf {
		return []byte("\r\n")
	}
	return []byte{'\n'}
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
// is written, and the child's pipe (or pty master) is closed so that it
// sees the break.
func (s *Stream) write(p []byte) {
	if s.err != nil {
		return
	}
	if _, err := s.out.Write(p); err != nil {
		s.fail(err)
	}
}

func (s *Stream) fail(err error) {
	s.err = err
	s.src.Close()
}

// outFailed is write's failure for bytes passed by tee.
func (s *Stream) outFailed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.fail(err)
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
func (k streamSink) WriteEvent(_ *event.Event, line []byte) error { return k.s.writeLine(line) }
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

// newPipe makes a pipe for the child's output, as big as the system
// lets it be (see growPipe): the child then writes big chunks without
// waiting, and lcwrap copies them with fewer wake-ups.
func newPipe() (r, w *os.File, err error) {
	if r, w, err = os.Pipe(); err == nil {
		growPipe(w)
	}
	return r, w, err
}

// Renew gives a drained Stream a new pipe and copies from it: the child's
// bytes already copied stay where they are, and a line the last child
// left unfinished stays open. It fails when the Stream is closed or no
// pipe can be made.
func (s *Stream) Renew() error {
	r, w, err := newPipe()
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		r.Close()
		w.Close()
		return ErrClosed
	}
	s.r.Close()
	if s.err != nil {
		r.Close() // the real stream is broken: the child sees it at once
	}
	s.r, s.w, s.src, s.done = r, w, r, make(chan struct{})
	s.eof, s.childEnded = false, false
	s.mu.Unlock()
	go s.copy()
	return nil
}

// Teeable reports whether the child's bytes for out can pass by tee(2),
// without a copy through lcwrap's memory (out is a pipe in non-blocking
// mode, on Linux).
func Teeable(out io.Writer) bool { return teeFD(out) >= 0 }
