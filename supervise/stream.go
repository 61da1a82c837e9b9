package supervise

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
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
	// copyBuffer is the size of the reads from the child.
	copyBuffer = 256 << 10
)

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
	tap        *lineTap    // the child's lines feed activity (nil: not watched)
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

// NewStream starts interposing on out (named "stdout" or "stderr" in
// warnings). It fails only when a pipe cannot be made.
func NewStream(name string, out io.Writer) (*Stream, error) {
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
func (s *Stream) Sink() emit.Sink {
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

// follow makes the stream copy the child's output from src (a pty
// master) instead of its pipe, which the child never gets. Call it
// before the child starts.
func (s *Stream) follow(src *os.File) {
	src.SetReadDeadline(time.Time{}) // an earlier attempt's drain set one
	s.mu.Lock()
	s.src = src
	s.mu.Unlock()
	s.closeChildEnd() // the pipe ends, and the copy goes on from src
}

// watch feeds the child's lines to t.
func (s *Stream) watch(t *lineTap) {
	s.mu.Lock()
	s.tap = t
	s.mu.Unlock()
}

// rawTerminal says whether out is a terminal in raw mode, where lcwrap's
// own lines must end with "\r\n" to start the next at the left margin.
func (s *Stream) rawTerminal(raw bool) {
	s.mu.Lock()
	s.crlf = raw
	s.mu.Unlock()
}

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
	src := s.src
	s.mu.Unlock()
	s.r.Close()
	if src != s.r {
		src.SetReadDeadline(time.Now()) // the pty is not the stream's to close
	}
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
		s.tap.end()
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
		s.tap.write(p)
	}
}

// child takes bytes the child wrote.
func (s *Stream) child(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tap != nil {
		s.tap.write(p)
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
		return ErrStreamClosed
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

// newPipe makes a pipe for the child's output, as big as the system
// lets it be (see growPipe): the child then writes big chunks without
// waiting, and lcwrap copies them with fewer wake-ups.
func newPipe() (r, w *os.File, err error) {
	if r, w, err = os.Pipe(); err == nil {
		growPipe(w)
	}
	return r, w, err
}

// streamOf is the Stream whose pipe f is (nil: none).
func streamOf(streams []*Stream, f *os.File) *Stream {
	for _, st := range streams {
		if f != nil && st.ChildFile() == f {
			return st
		}
	}
	return nil
}

// Output is one of the child's output streams, as Interpose sees it.
type Output struct {
	// File is where the child's bytes go (lcwrap's own stdout or stderr);
	// nil: the stream is closed.
	File *os.File
	// Via, when set, is a writer the bytes pass through on their way
	// (it writes to File itself: an output tap); it needs a Stream.
	Via io.Writer
	// Events says event lines share the stream.
	Events bool
	// Leave says the stream is interposed already: Interpose leaves it.
	Leave bool
}

// Outputs is what Interpose decides from: the child's two output streams
// and what, besides the child, must see or share them.
type Outputs struct {
	Stdout, Stderr Output
	// Watch says Run must see the child's output (ActivityOutput).
	Watch bool
	// PTY says the child's output comes from a pty (Config.PTY): a Stream
	// on stdout reads it.
	PTY bool
}

// Interposed is what Interpose decided.
type Interposed struct {
	// Stdout and Stderr are the child's (Config.Stdout, Config.Stderr):
	// a Stream's pipe, or the real file when nothing needs to see it.
	// They are nil for a stream that was left as it was (Output.Leave).
	Stdout, Stderr *os.File
	// Streams are the Streams made (for Config.Streams); Close closes
	// them.
	Streams []*Stream
	// Sinks are the event sinks of the streams events share.
	Sinks []emit.Sink
	// Messages is where lcwrap's own messages go to keep them whole among
	// the child's output when event lines share stderr (nil: write to
	// stderr directly).
	Messages io.Writer
}

// Interpose decides, in one place, which of the child's output streams
// lcwrap interposes on, and makes a Stream for each: a stream event lines
// share, one with a Via writer, one Run must see (the PTY's output, or
// both streams for output activity). Stdout and stderr that are one file
// (2>&1) get one Stream when events share either or Run watches them, so
// their order is kept. Anything else goes to the child as it is, with no
// copy. Outcomes: the decision; or an error wrapping ErrInterpose when a
// pipe cannot be made (the Streams already made are closed).
func Interpose(o Outputs) (*Interposed, error) {
	ip := &Interposed{}
	open := func(name string, out io.Writer) (*Stream, error) {
		if out == nil {
			out = io.Discard
		}
		st, err := NewStream(name, out)
		if err != nil {
			ip.Close()
			return nil, fmt.Errorf("%w (%s): %v", ErrInterpose, name, err)
		}
		ip.Streams = append(ip.Streams, st)
		return st, nil
	}
	events := o.Stdout.Events || o.Stderr.Events
	if !o.Stdout.Leave && !o.Stderr.Leave && (events || o.Watch && !o.PTY) &&
		o.Stdout.File != nil && o.Stderr.File != nil && oneFile(o.Stdout.File, o.Stderr.File) {
		st, err := open("stdout", writerOf(o.Stdout))
		if err != nil {
			return nil, err
		}
		ip.Stdout, ip.Stderr = st.ChildFile(), st.ChildFile()
		if events {
			ip.Sinks = append(ip.Sinks, st.Sink())
			ip.Messages = st.Lines()
		}
		return ip, nil
	}
	for _, side := range []struct {
		name  string
		o     Output
		watch bool
		child **os.File
	}{
		{"stdout", o.Stdout, o.PTY || o.Watch && o.Stdout.File != nil, &ip.Stdout},
		{"stderr", o.Stderr, o.Watch && !o.PTY && o.Stderr.File != nil, &ip.Stderr},
	} {
		switch {
		case side.o.Leave:
			continue
		case !side.o.Events && side.o.Via == nil && !side.watch:
			*side.child = side.o.File
			continue
		}
		st, err := open(side.name, writerOf(side.o))
		if err != nil {
			return nil, err
		}
		*side.child = st.ChildFile()
		if side.o.Events {
			ip.Sinks = append(ip.Sinks, st.Sink())
			if side.name == "stderr" {
				ip.Messages = st.Lines()
			}
		}
	}
	return ip, nil
}

// writerOf is where a stream's bytes go: Via, else File (nil: nowhere).
func writerOf(o Output) io.Writer {
	if o.Via != nil {
		return o.Via
	}
	if o.File != nil {
		return o.File
	}
	return nil
}

// Close closes the Streams made.
func (ip *Interposed) Close() {
	for _, st := range ip.Streams {
		st.Close()
	}
}

// interposeFor makes the Streams Run itself needs that the caller did not
// make (a caller that is not lcwrap's command line may set Activity or
// PTY and leave the streams to Run), with Interpose. It returns them;
// Run closes them.
func interposeFor(cfg *Config) ([]*Stream, error) {
	o := Outputs{
		Stdout: Output{File: cfg.Stdout, Leave: streamOf(cfg.Streams, cfg.Stdout) != nil},
		Stderr: Output{File: cfg.Stderr, Leave: streamOf(cfg.Streams, cfg.Stderr) != nil},
		Watch:  cfg.Activity == ActivityOutput,
		PTY:    cfg.PTY != nil,
	}
	ip, err := Interpose(o)
	if err != nil {
		return nil, err
	}
	if !o.Stdout.Leave {
		cfg.Stdout = ip.Stdout
	}
	if !o.Stderr.Leave {
		cfg.Stderr = ip.Stderr
	}
	cfg.Streams = append(slices.Clip(cfg.Streams), ip.Streams...)
	return ip.Streams, nil
}

// oneFile reports whether a and b are one file (2>&1).
func oneFile(a, b *os.File) bool {
	if a == b {
		return true
	}
	sa, err1 := a.Stat()
	sb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func closeStreams(streams []*Stream) {
	for _, st := range streams {
		st.Close()
	}
}
