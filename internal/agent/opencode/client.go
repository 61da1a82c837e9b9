package opencode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// openEvents opens GET /event on a loopback server (addr: host:port) and
// returns the event stream's body. It is HTTP/1.1 by hand (net/http stays
// out of lcwrap's binary; docs/design.md's decisions): a 200 answer, its
// body read as it comes, chunked or to the close.
func openEvents(ctx context.Context, addr string) (io.ReadCloser, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	// A server still starting can take the connection and never answer
	// (measured with 1.18.33): the head must come within headTimeout.
	c.SetDeadline(time.Now().Add(headTimeout))
	fmt.Fprintf(c, "GET /event HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nUser-Agent: lcwrap\r\n\r\n", addr)
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	status, err := tp.ReadLine()
	if err != nil {
		stop()
		c.Close()
		return nil, err
	}
	if _, code, _ := strings.Cut(status, " "); !strings.HasPrefix(code, "200") {
		stop()
		c.Close()
		return nil, fmt.Errorf("GET /event: %q", status)
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		stop()
		c.Close()
		return nil, err
	}
	var body io.Reader = br
	if strings.EqualFold(h.Get("Transfer-Encoding"), "chunked") {
		body = &chunked{r: br}
	} else if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil {
		body = io.LimitReader(br, n)
	}
	return &conn{Reader: body, c: c, stop: stop}, nil
}

// headTimeout bounds the wait for the answer's head; idleTimeout the
// silence of a stream whose server sends a heartbeat every 10s.
const (
	headTimeout = 5 * time.Second
	idleTimeout = 35 * time.Second
)

type conn struct {
	io.Reader
	c    net.Conn
	stop func() bool
}

func (c *conn) Read(p []byte) (int, error) {
	c.c.SetDeadline(time.Now().Add(idleTimeout))
	return c.Reader.Read(p)
}

func (c *conn) Close() error { c.stop(); return c.c.Close() }

// chunked reads a chunked body.
type chunked struct {
	r    *bufio.Reader
	left int64
	done bool
}

func (ch *chunked) Read(p []byte) (int, error) {
	if ch.done {
		return 0, io.EOF
	}
	if ch.left == 0 {
		line, err := ch.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		size, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil || n < 0 {
			return 0, errors.New("bad chunk size")
		}
		if n == 0 {
			ch.done = true
			return 0, io.EOF
		}
		ch.left = n
	}
	if int64(len(p)) > ch.left {
		p = p[:ch.left]
	}
	n, err := ch.r.Read(p)
	ch.left -= int64(n)
	if ch.left == 0 && err == nil {
		if _, err := ch.r.Discard(2); err != nil { // the chunk's CRLF
			return n, err
		}
	}
	return n, err
}
