package hookhttp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestServePost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	var rejected []string
	s := Serve(ln, "tok", func(b []byte) {
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
	}, func(r string) {
		mu.Lock()
		rejected = append(rejected, r)
		mu.Unlock()
	})
	url := "http://" + s.Addr() + "/hook"
	if err := Post(url, "tok", []byte(`{"a":1}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := Post(url, "wrong", []byte(`{"b":2}`), 5*time.Second); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a wrong token: %v", err)
	}
	// Keep-alive and chunked, as a client such as Node's fetch may send.
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	c.Write([]byte("POST /hook HTTP/1.1\r\nHost: x\r\nX-Lcwrap-Token: tok\r\nContent-Length: 3\r\n\r\none"))
	if line, _ := r.ReadString('\n'); !strings.Contains(line, "200") {
		t.Fatalf("first: %q", line)
	}
	r.ReadString('\n')
	r.ReadString('\n')
	c.Write([]byte("POST /hook HTTP/1.1\r\nx-lcwrap-token: tok\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n1;x=y\r\n!\r\n0\r\n\r\n"))
	if line, _ := r.ReadString('\n'); !strings.Contains(line, "200") {
		t.Fatalf("second: %q", line)
	}
	c.Close()
	s.Close(time.Second)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != `{"a":1}|one|two!` {
		t.Fatalf("bodies %q", got)
	}
	if len(rejected) != 1 {
		t.Fatalf("rejected %q", rejected)
	}
	if err := Post(url, "tok", []byte(`{}`), time.Second); err == nil {
		t.Fatal("a closed server took a post")
	}
}

func FuzzReadRequest(f *testing.F) {
	f.Add([]byte("POST /hook HTTP/1.1\r\nX-Lcwrap-Token: t\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ReadRequest(bufio.NewReaderSize(bytes.NewReader(b), 4096))
		if err == nil && len(req.Body) > MaxBody {
			t.Fatal("body over the limit")
		}
	})
}

// BenchmarkPost is one hook payload posted to the server and answered,
// a new connection each time (Claude Code keeps its connection, so it
// pays less).
func BenchmarkPost(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := Serve(ln, "tok", func([]byte) {}, nil)
	defer s.Close(time.Second)
	url := "http://" + s.Addr() + "/hook"
	body := bytes.Repeat([]byte("x"), 600)
	for b.Loop() {
		if err := Post(url, "tok", body, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// Each path has its handler; a path with none is answered 404 and
// rejected, after the token check (which an unknown caller fails first).
func TestRoutes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][]string{}
	var rejected []string
	route := func(name string) func([]byte) {
		return func(b []byte) {
			mu.Lock()
			got[name] = append(got[name], string(b))
			mu.Unlock()
		}
	}
	s := ServeRoutes(ln, "tok", Routes{"/hook": route("hook"), "/v1/logs": route("logs")}, func(r string) {
		mu.Lock()
		rejected = append(rejected, r)
		mu.Unlock()
	})
	base := "http://" + s.Addr()
	for _, p := range []struct{ path, body string }{{"/hook", "h1"}, {"/v1/logs", "l1"}, {"/hook?x=1", "h2"}} {
		if err := Post(base+p.path, "tok", []byte(p.body), 5*time.Second); err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
	}
	if err := Post(base+"/other", "tok", []byte("o"), 5*time.Second); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("an unknown path: %v", err)
	}
	if err := Post(base+"/other", "wrong", []byte("o"), 5*time.Second); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("an unknown path with a wrong token: %v", err)
	}
	s.Close(time.Second)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got["hook"], "|") != "h1|h2" || strings.Join(got["logs"], "|") != "l1" {
		t.Fatalf("bodies %q", got)
	}
	if strings.Join(rejected, "|") != "unknown path|missing or wrong token" {
		t.Fatalf("rejected %q", rejected)
	}
}

// flakyListener fails Accept with err on the calls fail says, and
// otherwise accepts from the listener it wraps.
type flakyListener struct {
	net.Listener
	mu    sync.Mutex
	calls int
	fail  func(call int) error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.calls++
	err := l.fail(l.calls)
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return l.Listener.Accept()
}

// A failed accept (too many open files, a connection aborted before it
// was taken, any other) never ends the serving: it is counted, retried
// after a wait, and the hooks that follow are recorded.
func TestAcceptFailuresAreRetried(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errs := []error{
		&net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)},
		errors.New("something else"),
	}
	ln := &flakyListener{Listener: inner, fail: func(call int) error {
		// Calls 1, 3, 4, 6, 7, 8: fail; the others accept.
		switch call {
		case 1, 3, 4, 6, 7, 8:
			return errs[call%len(errs)]
		}
		return nil
	}}
	var mu sync.Mutex
	var got []string
	s := Serve(ln, "tok", func(b []byte) {
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
	}, nil)
	url := "http://" + s.Addr() + "/hook"
	for i := range 4 {
		if err := Post(url, "tok", []byte{'a' + byte(i)}, 10*time.Second); err != nil {
			t.Fatalf("hook %d after failed accepts: %v", i, err)
		}
	}
	if n := s.AcceptErrors(); n != 6 {
		t.Errorf("%d accept errors counted, want 6", n)
	}
	s.Close(time.Second)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "") != "abcd" {
		t.Fatalf("recorded %q", got)
	}
}

// Close ends the serving while it waits to accept again.
func TestCloseDuringAcceptRetry(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	failing := make(chan struct{}, 1)
	ln := &flakyListener{Listener: inner, fail: func(int) error {
		select {
		case failing <- struct{}{}:
		default:
		}
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}}
	s := Serve(ln, "tok", func([]byte) {}, nil)
	<-failing
	done := make(chan struct{})
	go func() { s.Close(time.Second); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return while the server waited to accept again")
	}
}

// A keep-alive connection left idle (the agent's, between two hooks) ends
// quietly at the read deadline and at Close: no 400 sent on it, nothing
// rejected. A request cut short by the deadline is still rejected.
func TestIdleConnectionIsNoBadRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var rejected []string
	s := Serve(ln, "tok", func([]byte) {}, func(r string) {
		mu.Lock()
		rejected = append(rejected, r)
		mu.Unlock()
	})
	idle, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	r := bufio.NewReader(idle)
	idle.Write([]byte("POST /hook HTTP/1.1\r\nX-Lcwrap-Token: tok\r\nContent-Length: 2\r\n\r\n{}"))
	if line, _ := r.ReadString('\n'); !strings.Contains(line, "200") {
		t.Fatalf("first: %q", line)
	}
	for range 2 {
		r.ReadString('\n')
	}
	cut, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	cut.Write([]byte("POST /hook HTTP/1.1\r\nX-Lcwrap-Token: tok\r\nContent-Length: 10\r\n\r\n{}"))
	// The idle connection has been served once: wait for the cut one to
	// be read before closing.
	testtool.Eventually(t, "the cut request to be taken", func() bool { return s.openConns() == 2 })
	s.Close(time.Second)
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("the idle connection got %q (%v), want nothing", rest, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(rejected, "|") != "unreadable request" {
		t.Fatalf("rejected %q, want the cut request only", rejected)
	}
}

// openConns is how many connections the server holds.
func (s *Server) openConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
