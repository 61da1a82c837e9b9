package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	pt "github.com/lcwrap/lcwrap/internal/projection/projectiontest"
	"github.com/lcwrap/lcwrap/internal/serve"
)

const token = "t0ken-for-tests"

// syncBuf is a log the server and the test share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testServer is a server listening on loopback with every bound of
// HTTPServer, its picture kept by Run.
type testServer struct {
	*serve.Server
	URL  string
	Addr string
	Log  *syncBuf
	srv  *http.Server
	stop context.CancelFunc
}

// start serves cfg (Token and Hosts filled in when empty) on 127.0.0.1.
func start(t *testing.T, cfg serve.Config) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Token == "" {
		cfg.Token = token
	}
	if cfg.Hosts == nil {
		cfg.Hosts = serve.Hosts(l.Addr(), nil)
	}
	log := &syncBuf{}
	if cfg.Log == nil {
		cfg.Log = log
	}
	s, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	srv := serve.HTTPServer(s, log)
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go srv.Serve(l)
	ts := &testServer{Server: s, URL: "http://" + l.Addr().String(), Addr: l.Addr().String(), Log: log, srv: srv, stop: stop}
	t.Cleanup(func() { ts.Close(); <-done })
	return ts
}

// Close stops the server: its streams end, its listener closes.
func (ts *testServer) Close() {
	ts.stop()
	ts.srv.Close()
}

// do sends a request with the token (unless hdr says otherwise) and
// returns the status, the headers and the body.
func do(t *testing.T, method, url string, hdr map[string]string, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// errorCode decodes an error answer's code.
func errorCode(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Error serve.Error `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not a JSON error with a code and a message: %v: %s", err, b)
	}
	return e.Error.Code
}

// sseMsg is one Server-Sent Event as a client sees it.
type sseMsg struct {
	Event, ID, Data string
	Comment         bool
}

// stream is an open GET /v1/events.
type stream struct {
	resp *http.Response
	r    *bufio.Reader
	msgs chan sseMsg
	err  chan error
}

// openStream opens GET /v1/events with the headers given.
func openStream(t *testing.T, url string, hdr map[string]string) *stream {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	s := &stream{resp: resp, r: bufio.NewReader(resp.Body), msgs: make(chan sseMsg, 1<<16), err: make(chan error, 1)}
	go func() { s.err <- readSSE(s.r, s.msgs); close(s.msgs) }()
	t.Cleanup(func() { resp.Body.Close() })
	return s
}

// readSSE parses an event stream into msgs (comments included), as a
// browser does: a message is dispatched at its blank line only.
func readSSE(r *bufio.Reader, msgs chan<- sseMsg) error {
	var m sseMsg
	have := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if have && m.Data != "" {
				msgs <- m
			}
			m, have = sseMsg{}, false
		case strings.HasPrefix(line, ":"):
			msgs <- sseMsg{Comment: true, Data: strings.TrimSpace(line[1:])}
		default:
			f, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch f {
			case "event":
				m.Event = v
			case "id":
				m.ID = v
			case "data":
				m.Data = v
			}
			have = true
		}
	}
}

// next returns the next message that is not a comment, or fails after d.
func (s *stream) next(t *testing.T, d time.Duration) sseMsg {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatalf("the stream ended: %v", <-s.err)
			}
			if !m.Comment {
				return m
			}
		case <-deadline:
			t.Fatalf("no message within %v", d)
		}
	}
}

// ids reads n journal-line messages and returns their ids.
func (s *stream) ids(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		m := s.next(t, 20*time.Second)
		if m.Event == "" {
			out = append(out, m.ID)
		}
	}
	return out
}

// events builds n events of child id, from sequence from.
func events(id string, from, n int64) []event.Event {
	var out []event.Event
	for i := range n {
		seq := from + i
		switch seq {
		case 1:
			out = append(out, pt.Ev(id, 1, event.KindCreated, event.StateCreated))
		case 2:
			out = append(out, pt.Ev(id, 2, event.KindStateChanged, event.StateStarting))
		case 3:
			out = append(out, pt.Ev(id, 3, event.KindStateChanged, event.StateRunning))
		default:
			out = append(out, pt.WithActivity(pt.Ev(id, seq, event.KindActivity, ""), fmt.Sprintf("step %d", seq)))
		}
	}
	return out
}

// wrapper starts a process that stands for a child's wrapper and
// records the events lcwrap run writes for child id up to running, with
// that process as the wrapper.
func wrapper(t *testing.T, j, id string, end ...event.State) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	self, _, err := event.IdentityOf(event.System, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	jr, err := journal.Open(j, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	em := emit.New(emit.Options{}, emit.NewJournalSink(jr))
	c := em.Child(id, event.Lineage{}, event.Launched(true))
	var specs []emit.Spec
	for _, spec := range []emit.Spec{
		{Kind: event.KindCreated, State: event.StateCreated, Details: event.Created{Command: event.Command{"make"}, HeartbeatIntervalMs: 10000, Wrapper: &self, Profile: "launched"}},
		{Kind: event.KindStateChanged, State: event.StateStarting},
		{Kind: event.KindStateChanged, State: event.StateRunning},
	} {
		specs = append(specs, spec)
	}
	for _, st := range end {
		specs = append(specs, emit.Spec{Kind: event.KindTerminal, State: st, Details: event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: event.ExitCode(0)}})
	}
	for _, spec := range specs {
		if _, err := c.Emit(spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := em.Close(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// journalRepair is lcwrap journal repair.
func journalRepair(path string) (journal.RepairReport, error) {
	return journal.Repair(path, journal.Options{})
}
