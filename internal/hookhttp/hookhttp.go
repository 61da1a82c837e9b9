package hookhttp

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits of one request.
const (
	MaxHeader = 16 << 10
	MaxBody   = 1 << 20
	// ReadTimeout bounds the wait for one whole request on a connection
	// that has sent an authenticated one.
	ReadTimeout = 10 * time.Second
	// AuthTimeout bounds the wait, from its accept, for a connection's
	// first whole authenticated request; a connection that has not sent
	// one by then is closed.
	AuthTimeout = 3 * time.Second
	// MaxConns caps the open connections; at the cap the oldest one that
	// has not authenticated is closed for a new one (a new one is refused
	// when every open one has authenticated).
	MaxConns = 512
)

// Reasons passed to reject for connections rather than requests.
const (
	RejectTimeout = "no whole authenticated request within the deadline"
	RejectEvicted = "closed at the connection cap, not authenticated"
	RejectAtCap   = "refused at the connection cap"
)

// Limits of the server under test (the constants otherwise).
var (
	maxConns    = MaxConns
	authTimeout = AuthTimeout
)

// TokenHeader carries the per-run token.
const TokenHeader = "X-Lcwrap-Token"

// HookPath is where Serve takes an agent's hook payloads.
const HookPath = "/hook"

// Accept's retry after a failure: the first wait, doubled up to the last
// (as net/http's Server does).
const (
	acceptRetryFirst = 5 * time.Millisecond
	acceptRetryMax   = time.Second
)

var (
	// ErrMalformed means a request could not be read as HTTP/1.1.
	ErrMalformed = errors.New("hookhttp: malformed request")
	// ErrTooLarge means a header or body exceeded its limit.
	ErrTooLarge = errors.New("hookhttp: request too large")
	// ErrIdle means the read deadline passed before a request began.
	ErrIdle = errors.New("hookhttp: no request before the deadline")
)

// Request is what ReadRequest reads.
type Request struct {
	Method, Path string
	Header       map[string]string // keys in canonical lower case
	Body         []byte
	Close        bool // the client asked to close the connection
}

// ReadRequest reads one request from r. Outcomes: the Request; io.EOF
// when the connection ended between requests; ErrIdle when the read
// deadline passed between requests (an idle keep-alive connection);
// ErrMalformed or ErrTooLarge (the connection should then be closed); a
// read error.
func ReadRequest(r *bufio.Reader) (*Request, error) {
	var head []string
	size := 0
	for {
		line, err := r.ReadSlice('\n')
		size += len(line)
		if size > MaxHeader {
			return nil, ErrTooLarge
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, ErrTooLarge
			}
			if len(head) == 0 && len(line) == 0 && errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			if len(head) == 0 && len(line) == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, ErrIdle
			}
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		l := strings.TrimRight(string(line), "\r\n")
		if l == "" {
			if len(head) == 0 {
				continue // a stray line end between requests
			}
			break
		}
		head = append(head, l)
	}
	parts := strings.Fields(head[0])
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "HTTP/1.") {
		return nil, ErrMalformed
	}
	req := &Request{Method: parts[0], Path: parts[1], Header: map[string]string{}}
	for _, h := range head[1:] {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return nil, ErrMalformed
		}
		req.Header[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	req.Close = strings.EqualFold(req.Header["connection"], "close") || parts[2] == "HTTP/1.0" && !strings.EqualFold(req.Header["connection"], "keep-alive")
	var err error
	switch {
	case strings.EqualFold(req.Header["transfer-encoding"], "chunked"):
		req.Body, err = readChunked(r)
	case req.Header["content-length"] != "":
		n, perr := strconv.ParseInt(req.Header["content-length"], 10, 64)
		switch {
		case perr != nil || n < 0:
			return nil, ErrMalformed
		case n > MaxBody:
			return nil, ErrTooLarge
		}
		req.Body = make([]byte, n)
		_, err = io.ReadFull(r, req.Body)
	case req.Header["transfer-encoding"] != "":
		return nil, ErrMalformed
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

func readChunked(r *bufio.Reader) ([]byte, error) {
	var body []byte
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		sz, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
		n, err := strconv.ParseInt(sz, 16, 64)
		if err != nil || n < 0 {
			return nil, ErrMalformed
		}
		if int64(len(body))+n > MaxBody {
			return nil, ErrTooLarge
		}
		if n == 0 {
			for { // trailers, up to the empty line
				t, err := r.ReadSlice('\n')
				if err != nil {
					return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
				}
				if len(bytes.TrimSpace(t)) == 0 {
					return body, nil
				}
			}
		}
		chunk := make([]byte, n)
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil, err
		}
		body = append(body, chunk...)
		if crlf, err := r.ReadSlice('\n'); err != nil || len(bytes.TrimSpace(crlf)) != 0 {
			return nil, ErrMalformed
		}
	}
}

// Routes maps a request path ("/hook", "/v1/logs"; the query is not part
// of it) to the handler of the bodies posted there.
type Routes map[string]func(body []byte)

// Server serves hook POSTs on a listener until Close.
type Server struct {
	ln      net.Listener
	token   []byte
	routes  Routes
	reject  func(reason string)
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]*connState
	closing bool
	done    chan struct{} // closed by Close: ends a wait between accepts
	// acceptErrors counts the failed accepts (each retried); mu guards it.
	acceptErrors int

	maxConns    int
	authTimeout time.Duration
}

// connState is what the server knows of one open connection.
type connState struct {
	accepted time.Time
	authed   bool // it has sent a whole authenticated request
}

// Serve is ServeRoutes with one route: handle takes the bodies posted to
// HookPath.
func Serve(ln net.Listener, token string, handle func(body []byte), reject func(reason string)) *Server {
	return ServeRoutes(ln, token, Routes{HookPath: handle}, reject)
}

// ServeRoutes starts serving on ln: every POST whose token header equals
// token, to a path of routes, has its body passed to that route's handler
// (one call at a time, in arrival order per connection), and is answered
// 200 with an empty body once the handler returned; any other request is
// answered 405, 403, 404 or 400 and passed to reject with a short reason
// (never its content). A connection that has not sent a whole
// authenticated request within AuthTimeout of its accept is closed, and at
// MaxConns the oldest unauthenticated one is closed first (both passed to
// reject). A failed accept (too many open files, a connection reset before
// it was taken) never ends the serving: it is counted (AcceptErrors) and
// tried again after a wait that doubles from 5 ms to 1 s, until Close.
func ServeRoutes(ln net.Listener, token string, routes Routes, reject func(reason string)) *Server {
	s := &Server{ln: ln, token: []byte(token), routes: routes, reject: reject, conns: map[net.Conn]*connState{},
		done: make(chan struct{}), maxConns: maxConns, authTimeout: authTimeout}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Addr is the listener's address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// AcceptErrors is how many accepts have failed so far (each was retried).
func (s *Server) AcceptErrors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acceptErrors
}

func (s *Server) accept() {
	defer s.wg.Done()
	var wait time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing || errors.Is(err, net.ErrClosed)
			if !closing {
				s.acceptErrors++
			}
			s.mu.Unlock()
			if closing {
				return
			}
			wait = min(max(2*wait, acceptRetryFirst), acceptRetryMax)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.done:
				t.Stop()
				return
			}
			continue
		}
		wait = 0
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			return
		}
		reason := s.admit(c)
		if reason == RejectAtCap {
			s.mu.Unlock()
			c.Close()
			s.rejected(reason)
			continue
		}
		s.wg.Add(1)
		s.mu.Unlock()
		if reason != "" {
			s.rejected(reason)
		}
		go s.serve(c)
	}
}

// admit registers c (s.mu held). At the cap it closes the oldest
// connection that has not authenticated and returns RejectEvicted, or,
// when every open one has, returns RejectAtCap and registers nothing.
func (s *Server) admit(c net.Conn) string {
	reason := ""
	if len(s.conns) >= s.maxConns {
		var oldest net.Conn
		var at time.Time
		for oc, st := range s.conns {
			if !st.authed && (oldest == nil || st.accepted.Before(at)) {
				oldest, at = oc, st.accepted
			}
		}
		if oldest == nil {
			return RejectAtCap
		}
		delete(s.conns, oldest) // its serve sees a closed connection
		oldest.Close()
		reason = RejectEvicted
	}
	s.conns[c] = &connState{accepted: time.Now()}
	return reason
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReaderSize(c, 4096)
	s.mu.Lock()
	st := s.conns[c]
	s.mu.Unlock()
	if st == nil {
		return // evicted before it was served
	}
	authDeadline := st.accepted.Add(s.authTimeout)
	authed := false
	for {
		deadline := time.Now().Add(ReadTimeout)
		if !authed {
			deadline = authDeadline
		}
		c.SetReadDeadline(deadline)
		req, err := ReadRequest(r)
		if err != nil {
			s.mu.Lock()
			evicted, closing := s.conns[c] == nil, s.closing
			s.mu.Unlock()
			switch {
			case evicted: // counted when it was evicted
			case !authed && !closing && !time.Now().Before(authDeadline):
				s.rejected(RejectTimeout)
			// An idle keep-alive connection (the agent's, between two
			// hooks; every one at Close) ends quietly: only a request
			// that was bad, or cut short, is answered 400 and rejected.
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, ErrIdle):
				s.rejected("unreadable request")
				io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}
			return
		}
		status := "200 OK"
		path, _, _ := strings.Cut(req.Path, "?")
		handle := s.routes[path]
		switch {
		case req.Method != "POST":
			status = "405 Method Not Allowed"
			s.rejected("not a POST")
		case subtle.ConstantTimeCompare([]byte(req.Header[strings.ToLower(TokenHeader)]), s.token) != 1:
			status = "403 Forbidden"
			s.rejected("missing or wrong token")
		case handle == nil:
			status = "404 Not Found"
			s.rejected("unknown path")
		default:
			if !authed {
				authed = true
				s.mu.Lock()
				if st := s.conns[c]; st != nil {
					st.authed = true
				}
				s.mu.Unlock()
			}
			handle(req.Body)
		}
		conn := ""
		if req.Close {
			conn = "Connection: close\r\n"
		}
		if _, err := io.WriteString(c, "HTTP/1.1 "+status+"\r\nContent-Length: 0\r\n"+conn+"\r\n"); err != nil || req.Close {
			return
		}
	}
}

func (s *Server) rejected(reason string) {
	if s.reject != nil {
		s.reject(reason)
	}
}

// Close stops accepting, lets requests being read or handled finish (at
// most wait), and closes every connection. No handle call starts after
// Close returns.
func (s *Server) Close(wait time.Duration) {
	s.mu.Lock()
	if !s.closing {
		close(s.done)
	}
	s.closing = true
	s.ln.Close()
	for c := range s.conns {
		// Idle keep-alive connections end now; one mid-request gets until
		// the deadline to finish.
		c.SetReadDeadline(time.Now().Add(min(wait, 50*time.Millisecond)))
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-done
	}
}

// Post sends body to url (http://127.0.0.1:PORT/PATH) with the token and
// waits at most timeout for the answer. Outcomes: nil for a 2xx; an error
// naming the status or the failure otherwise.
func Post(url, token string, body []byte, timeout time.Duration) error {
	rest, ok := strings.CutPrefix(url, "http://")
	if !ok {
		return fmt.Errorf("hookhttp: %q is not an http:// URL", url)
	}
	host, path, _ := strings.Cut(rest, "/")
	c, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", path, host, TokenHeader, token, len(body))
	b.Write(body)
	if _, err := c.Write(b.Bytes()); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("hookhttp: no answer: %w", err)
	}
	f := strings.Fields(line)
	if len(f) < 2 || len(f[1]) != 3 || f[1][0] != '2' {
		return fmt.Errorf("hookhttp: answered %q", strings.TrimSpace(line))
	}
	return nil
}
