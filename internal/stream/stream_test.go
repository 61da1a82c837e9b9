//go:build linux

package stream

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// newTestStream returns a stream whose timers only fire when the test
// calls onHold or onWait itself.
func newTestStream(t *testing.T) (*Stream, *testtool.Buffer) {
	t.Helper()
	out := &testtool.Buffer{}
	s, err := New("test", out)
	if err != nil {
		t.Fatal(err)
	}
	s.hold, s.wait = time.Hour, time.Hour
	s.Sink() // event lines share it
	t.Cleanup(func() { s.Close() })
	return s, out
}

// childWrite writes p as the child and waits until the stream has taken it.
func childWrite(t *testing.T, s *Stream, out *testtool.Buffer, p string) {
	t.Helper()
	before := out.String()
	s.mu.Lock()
	held := len(s.held)
	s.mu.Unlock()
	if _, err := s.ChildFile().WriteString(p); err != nil {
		t.Fatal(err)
	}
	testtool.Eventually(t, "the stream to take "+p, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.held) != held || out.String() != before
	})
}

func writeEvent(s *Stream, name string) error {
	return s.writeLine([]byte(`{"event":"` + name + `"}` + "\n"))
}

func TestStreamPlacesEventsAtLineStarts(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, s *Stream, out *testtool.Buffer)
		want string
	}{
		{"between lines: at once", func(t *testing.T, s *Stream, out *testtool.Buffer) {
			childWrite(t, s, out, "one\n")
			writeEvent(s, "a")
			childWrite(t, s, out, "two\n")
		}, "one\n{\"event\":\"a\"}\ntwo\n"},
		{"a held partial line waits behind the event", func(t *testing.T, s *Stream, out *testtool.Buffer) {
			childWrite(t, s, out, "abc")
			writeEvent(s, "a")
			childWrite(t, s, out, "def\n")
		}, "{\"event\":\"a\"}\nabcdef\n"},
		{"a written partial line is finished first", func(t *testing.T, s *Stream, out *testtool.Buffer) {
			childWrite(t, s, out, "Password: ")
			s.onHold() // the prompt shows
			writeEvent(s, "a")
			writeEvent(s, "b")
			if got := out.String(); got != "Password: " {
				t.Fatalf("event glued to the open line: %q", got)
			}
			childWrite(t, s, out, "ok\nnext")
		}, "Password: ok\n{\"event\":\"a\"}\n{\"event\":\"b\"}\n"},
		{"a line left open too long is ended by lcwrap", func(t *testing.T, s *Stream, out *testtool.Buffer) {
			childWrite(t, s, out, "abc")
			s.onHold()
			writeEvent(s, "a")
			childWrite(t, s, out, "de")
			s.onWait()
			childWrite(t, s, out, "f\n")
		}, "abcde\n{\"event\":\"a\"}\nf\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, out := newTestStream(t)
			tc.do(t, s, out)
			if got := out.String(); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStreamEndsTheLastLineBeforeEvents(t *testing.T) {
	s, out := newTestStream(t)
	childWrite(t, s, out, "no newline at the end")
	s.Drain(time.Minute)
	writeEvent(s, "terminal")
	if got, want := out.String(), "no newline at the end\n{\"event\":\"terminal\"}\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestStreamPassesBytesThroughUnchanged(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) { testPassThrough(t, shared) })
	}
}

func testPassThrough(t *testing.T, shared bool) {
	out := &testtool.Buffer{}
	s, err := New("test", out)
	if err != nil {
		t.Fatal(err)
	}
	s.hold = time.Millisecond
	if shared {
		s.Sink()
	}
	s.Watch(nopTap{}) // watching changes no byte
	var want bytes.Buffer
	r := rand.New(rand.NewPCG(1, 2))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			chunk := make([]byte, r.IntN(300))
			for j := range chunk {
				chunk[j] = byte(r.IntN(256))
			}
			want.Write(chunk)
			s.ChildFile().Write(chunk)
		}
		s.CloseChildEnd()
	}()
	<-done
	s.Drain(time.Minute)
	s.Close()
	if !bytes.Equal([]byte(out.String()), want.Bytes()) {
		t.Fatalf("%d bytes out, %d in, not equal", len(out.String()), want.Len())
	}
}

func TestStreamWriteFailureReachesTheChild(t *testing.T) {
	out := &testtool.Buffer{Err: syscall.EPIPE}
	s, err := New("test", out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := writeEvent(s, "a"); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("event write: %v", err)
	}
	// The copy stops and the read end closes: the child's writes fail.
	testtool.Eventually(t, "the child's write to fail", func() bool {
		_, err := s.ChildFile().Write([]byte("x\n"))
		return errors.Is(err, syscall.EPIPE)
	})
}

func TestStreamEndsLcwrapsLinesWithCRLFOnARawTerminal(t *testing.T) {
	s, out := newTestStream(t)
	s.RawTerminal(true)
	childWrite(t, s, out, "abc")
	s.onHold()
	writeEvent(s, "a")
	s.onWait()
	if got, want := out.String(), "abc\r\n{\"event\":\"a\"}\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	s.RawTerminal(false)
	writeEvent(s, "b")
	if got, want := out.String(), "abc\r\n{\"event\":\"a\"}\r\n{\"event\":\"b\"}\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestStreamTeeFailureReachesTheChild(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Fd() // blocking: the Stream passes bytes by tee(2)
	r.Close()
	defer w.Close()
	s, err := New("test", w)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testtool.Eventually(t, "the child's write to fail", func() bool {
		_, err := s.ChildFile().Write([]byte("x\n"))
		return errors.Is(err, syscall.EPIPE)
	})
	if err := s.Close(); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Close: %v", err)
	}
}

// gateWriter blocks its first Write until gate is closed.
type gateWriter struct {
	testtool.Buffer
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.entered)
		<-g.gate
	})
	return g.Buffer.Write(p)
}

func TestStreamDrainKeepsWhatWasWrittenBeforeTheDeadline(t *testing.T) {
	out := &gateWriter{entered: make(chan struct{}), gate: make(chan struct{})}
	s, err := New("test", out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.ChildFile().WriteString("first\n")
	<-out.entered // the copy is stuck writing (a stalled machine)
	s.ChildFile().WriteString("second\n")
	s.r.SetReadDeadline(time.Now()) // drain's deadline passes meanwhile
	close(out.gate)
	<-s.done
	if got := out.String(); got != "first\nsecond\n" {
		t.Fatalf("copied %q", got)
	}
}

// A copy waiting to pass the child's bytes by tee(2) must not pass them
// raw once an event sink shares the stream: the gate refuses, nothing is
// passed or consumed, and the bytes are read (and placed around event
// lines) instead.
func TestTeeGateRefusesOnceShared(t *testing.T) {
	src, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	defer w.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	defer outW.Close()
	outW.Fd() // blocking, as a stdout pipe is: tee(2) passes to it
	tee := teeFD(outW)
	if tee < 0 {
		t.Skip("tee(2) is not used here")
	}
	if _, err := w.WriteString("abc"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_, _, err = teeRead(src, tee, buf, func(func()) bool { return false })
	if err != errNotPassing {
		t.Fatalf("teeRead with a closed gate: %v, want errNotPassing", err)
	}
	outR.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, _ := outR.Read(buf); n != 0 {
		t.Fatalf("the gate was closed, yet %q was passed", buf[:n])
	}
	if n, err := src.Read(buf); err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("the child's bytes were consumed: %q, %v", buf[:n], err)
	}
}

// Bytes passed by tee(2) are taken out of the child's pipe even when the
// drain's deadline passes between the tee and the read: left in the pipe,
// the sweep after the deadline would pass them a second time.
func TestTeeReadTakesWhatItPassedPastTheDeadline(t *testing.T) {
	src, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	defer w.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	defer outW.Close()
	outW.Fd() // blocking, as a stdout pipe is: tee(2) passes to it
	tee := teeFD(outW)
	if tee < 0 {
		t.Skip("tee(2) is not used here")
	}
	if _, err := w.WriteString("abc"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, outErr, err := teeRead(src, tee, buf, func(tee func()) bool {
		tee()
		src.SetReadDeadline(time.Now().Add(-time.Second)) // the drain's deadline passes now
		return true
	})
	if n != 3 || outErr != nil || err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("teeRead: %d bytes %q, %v, %v; want the 3 bytes passed", n, buf[:n], outErr, err)
	}
	if _, err := src.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("reading the child's pipe afterwards: %v", err)
	}
	rc, _ := src.SyscallConn()
	var left int
	rc.Control(func(fd uintptr) { left, _ = syscall.Read(int(fd), buf) })
	if left > 0 {
		t.Fatalf("%q passed yet left in the child's pipe for the sweep", buf[:left])
	}
}

// nopTap watches and does nothing.
type nopTap struct{}

func (nopTap) Write([]byte) {}
func (nopTap) End()         {}

// waitLimit bounds every wait of these tests.
const waitLimit = 30 * time.Second
