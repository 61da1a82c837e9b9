package supervise

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/stream"
)

// drainWait bounds how long Run keeps copying a stream after the main
// child has ended: processes it left behind may hold the stream open.
const drainWait = 250 * time.Millisecond

// Stream interposes on one of lcwrap's output streams (internal/stream):
// the child writes into its pipe (ChildFile), and the child's bytes pass
// through unchanged and in order, with event lines placed at line starts.
type Stream = stream.Stream

// NewStream starts interposing on out (named "stdout" or "stderr" in
// warnings). It fails only when a pipe cannot be made.
func NewStream(name string, out io.Writer) (*Stream, error) { return stream.New(name, out) }

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
	Sinks []event.Sink
	// Messages is where lcwrap's own messages go to keep them whole among
	// the child's output when event lines share stderr (nil: write to
	// stderr directly).
	Messages io.Writer

	from Outputs // what was decided from (Apply)
}

// decision is what a caller's Interpose covered (Config.interposed):
// whether it made the Streams output activity and a pty need.
type decision struct{ watch, pty bool }

// Apply gives cfg the decision: the child's Stdout and Stderr (but those
// left as they were), and the Streams made. Run then makes no Streams of
// its own, unless cfg asks it to see more than the decision covered
// (output activity or a PTY that Outputs did not say): Interpose runs once
// per run.
func (ip *Interposed) Apply(cfg *Config) {
	if !ip.from.Stdout.Leave {
		cfg.Stdout = ip.Stdout
	}
	if !ip.from.Stderr.Leave {
		cfg.Stderr = ip.Stderr
	}
	cfg.Streams = append(slices.Clip(cfg.Streams), ip.Streams...)
	cfg.interposed = &decision{watch: ip.from.Watch, pty: ip.from.PTY}
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
	ip := &Interposed{from: o}
	open := func(name string, out io.Writer) (*Stream, error) {
		if out == nil {
			out = io.Discard
		}
		st, err := stream.New(name, out)
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
// Run closes them. A caller that applied its own Interpose for the same
// Activity and PTY (Interposed.Apply) has them all: nothing is decided
// again.
func interposeFor(cfg *Config) ([]*Stream, error) {
	if d := cfg.interposed; d != nil && (d.watch || cfg.Activity != ActivityOutput) && (d.pty || cfg.PTY == nil) {
		return nil, nil
	}
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
