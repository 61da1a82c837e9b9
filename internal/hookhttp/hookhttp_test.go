package hookhttp

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
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
