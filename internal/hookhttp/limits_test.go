package hookhttp

import (
	"bufio"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// limitServer serves with the given limits and records bodies and
// rejections.
type limitServer struct {
	*Server
	mu       sync.Mutex
	got      []string
	rejected []string
}

func serveLimits(t *testing.T, conns int, auth time.Duration) *limitServer {
	t.Helper()
	oldC, oldA := maxConns, authTimeout
	maxConns, authTimeout = conns, auth
	t.Cleanup(func() { maxConns, authTimeout = oldC, oldA })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ls := &limitServer{}
	ls.Server = Serve(ln, "tok", func(b []byte) {
		ls.mu.Lock()
		ls.got = append(ls.got, string(b))
		ls.mu.Unlock()
	}, func(r string) {
		ls.mu.Lock()
		ls.rejected = append(ls.rejected, r)
		ls.mu.Unlock()
	})
	t.Cleanup(func() { ls.Close(time.Second) })
	return ls
}

func (ls *limitServer) rejections() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return slices.Clone(ls.rejected)
}

// closedByServer reports whether the server closed c (a read ends
// without data) before the deadline.
func closedByServer(c net.Conn, within time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(within))
	var b [64]byte
	for {
		_, err := c.Read(b[:])
		if err != nil {
			ne, ok := err.(net.Error)
			return !(ok && ne.Timeout())
		}
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestServeClosesUnauthenticatedAtDeadline: a connection that sends half a
// request and waits is closed at the authentication deadline and counted;
// hooks go on being taken (issue 23 item 3).
func TestServeClosesUnauthenticatedAtDeadline(t *testing.T) {
	ls := serveLimits(t, MaxConns, 300*time.Millisecond)
	c := dial(t, ls.Addr())
	c.Write([]byte("POST /hook HTTP/1.1\r\nX-Lcwrap-Token: tok\r\n"))
	if !closedByServer(c, 5*time.Second) {
		t.Fatal("a connection without a whole request is still open past the deadline")
	}
	if err := Post("http://"+ls.Addr()+"/hook", "tok", []byte("{}"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := ls.rejections(); !slices.Contains(r, RejectTimeout) {
		t.Errorf("rejections %q, want %q", r, RejectTimeout)
	}
}

// TestServeEvictsOldestUnauthenticated: at the connection cap, the oldest
// connection that never authenticated is closed for the new one; one that
// authenticated is kept (issue 23 item 3).
func TestServeEvictsOldestUnauthenticated(t *testing.T) {
	ls := serveLimits(t, 3, time.Minute)
	open := func() int {
		ls.Server.mu.Lock()
		defer ls.Server.mu.Unlock()
		return len(ls.conns)
	}
	waitOpen := func(n int) {
		t.Helper()
		if !testtool.Poll(10*time.Second, func() bool { return open() == n }) {
			t.Fatalf("%d connections open, want %d", open(), n)
		}
	}
	authed := dial(t, ls.Addr())
	ar := bufio.NewReader(authed)
	post := func() string {
		authed.Write([]byte("POST /hook HTTP/1.1\r\nX-Lcwrap-Token: tok\r\nContent-Length: 2\r\n\r\n{}"))
		authed.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := ar.ReadString('\n')
		ar.ReadString('\n')
		ar.ReadString('\n')
		return line
	}
	if l := post(); !strings.Contains(l, "200") {
		t.Fatalf("authenticated post: %q", l)
	}
	idle1 := dial(t, ls.Addr())
	waitOpen(2)
	idle2 := dial(t, ls.Addr())
	waitOpen(3)
	if err := Post("http://"+ls.Addr()+"/hook", "tok", []byte("{}"), 5*time.Second); err != nil {
		t.Fatalf("a hook at the cap: %v", err)
	}
	if !closedByServer(idle1, 5*time.Second) {
		t.Fatal("the oldest unauthenticated connection was not evicted")
	}
	if l := post(); !strings.Contains(l, "200") {
		t.Fatalf("the authenticated connection after the cap: %q", l)
	}
	if closedByServer(idle2, 100*time.Millisecond) {
		t.Error("the newer idle connection was closed, not the oldest")
	}
	if r := ls.rejections(); !slices.Contains(r, RejectEvicted) {
		t.Errorf("rejections %q, want %q", r, RejectEvicted)
	}
}
