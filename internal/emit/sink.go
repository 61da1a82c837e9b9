package emit

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/lcwrap/lcwrap/internal/event"
)

// SpecKind is where a --emit sink writes.
type SpecKind int

// The sink kinds of --emit.
const (
	SpecStderr SpecKind = iota
	SpecStdout
	SpecFD
	SpecFile
)

// SinkSpec is a parsed --emit value.
type SinkSpec struct {
	Kind SpecKind
	FD   int    // for SpecFD
	Path string // for SpecFile
}

// String returns the spec as it would be written on the command line.
func (s SinkSpec) String() string {
	switch s.Kind {
	case SpecStderr:
		return "stderr"
	case SpecStdout:
		return "stdout"
	case SpecFD:
		return "fd:" + strconv.Itoa(s.FD)
	}
	return "file:" + s.Path
}

// ParseSinkSpec parses stderr, stdout, fd:N or file:PATH. fd:1 and fd:2
// are the same streams as stdout and stderr.
func ParseSinkSpec(v string) (SinkSpec, error) {
	switch {
	case v == "stderr":
		return SinkSpec{Kind: SpecStderr}, nil
	case v == "stdout":
		return SinkSpec{Kind: SpecStdout}, nil
	case strings.HasPrefix(v, "fd:"):
		n, err := strconv.Atoi(v[3:])
		if err != nil || n < 0 {
			return SinkSpec{}, fmt.Errorf("%q: fd:N needs a non-negative file descriptor number", v)
		}
		switch n {
		case 1:
			return SinkSpec{Kind: SpecStdout}, nil
		case 2:
			return SinkSpec{Kind: SpecStderr}, nil
		}
		return SinkSpec{Kind: SpecFD, FD: n}, nil
	case strings.HasPrefix(v, "file:"):
		if len(v) == len("file:") {
			return SinkSpec{}, fmt.Errorf("%q: file:PATH needs a path", v)
		}
		return SinkSpec{Kind: SpecFile, Path: v[5:]}, nil
	}
	return SinkSpec{}, fmt.Errorf("%q: use stderr, stdout, fd:N or file:PATH", v)
}

// WriterSink writes lines to a stream the caller owns. One Write call per
// line; the mutex keeps lines of concurrent emitters whole.
type WriterSink struct {
	name string
	mu   sync.Mutex
	w    io.Writer
}

// NewWriterSink wraps w under a name.
func NewWriterSink(name string, w io.Writer) *WriterSink {
	return &WriterSink{name: name, w: w}
}

// Name implements Sink.
func (s *WriterSink) Name() string { return s.name }

// WriteEvent implements Sink.
func (s *WriterSink) WriteEvent(_ *event.Event, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.w.Write(line)
	return err
}

// Close implements Sink; the stream stays open.
func (s *WriterSink) Close() error { return nil }

// FileSink appends lines to a file it opened (O_APPEND, so lines of several
// writers never overlap).
type FileSink struct {
	WriterSink
	f *os.File
}

// OpenFileSink opens (creating, mode 0600) a file for appending events.
func OpenFileSink(path string) (*FileSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &FileSink{WriterSink: WriterSink{name: "file:" + path, w: f}, f: f}, nil
}

// Close implements Sink.
func (s *FileSink) Close() error { return s.f.Close() }

// OpenFDSink wraps an inherited file descriptor. It fails when n is not open.
func OpenFDSink(n int) (*FileSink, error) {
	f := os.NewFile(uintptr(n), "fd:"+strconv.Itoa(n))
	if f == nil {
		return nil, fmt.Errorf("fd:%d is not a valid descriptor", n)
	}
	if _, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("fd:%d is not open: %w", n, err)
	}
	return &FileSink{WriterSink: WriterSink{name: "fd:" + strconv.Itoa(n), w: f}, f: f}, nil
}
