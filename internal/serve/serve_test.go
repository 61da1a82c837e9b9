package serve_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
	pt "github.com/lcwrap/lcwrap/internal/projection/projectiontest"
	"github.com/lcwrap/lcwrap/internal/serve"
)

// Every data route needs the token; the page and its assets need none
// and carry the policy.
func TestTokenOnEveryDataRoute(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j})
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/children"}, {"GET", "/v1/children/a"}, {"GET", "/v1/snapshot"}, {"GET", "/v1/events"}, {"POST", "/v1/children/a/cancel"},
	} {
		for _, auth := range []string{"", "Bearer wrong", "Basic " + token, "Bearer " + token + "x"} {
			h := map[string]string{"Authorization": auth}
			code, hdr, b := do(t, r.method, ts.URL+r.path, h, "")
			if code != http.StatusUnauthorized || errorCode(t, b) != serve.CodeUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %q: %d %s", r.method, r.path, auth, code, b)
			}
		}
	}
	for _, p := range []string{"/", "/app.js", "/app.css"} {
		code, hdr, b := do(t, "GET", ts.URL+p, map[string]string{"Authorization": ""}, "")
		if code != 200 || hdr.Get("Content-Security-Policy") != serve.PagePolicy || len(b) == 0 {
			t.Errorf("GET %s without the token: %d, CSP %q", p, code, hdr.Get("Content-Security-Policy"))
		}
		if strings.Contains(string(b), token) {
			t.Errorf("GET %s carries the token", p)
		}
	}
	code, _, b := do(t, "GET", ts.URL+"/v1/children", nil, "")
	if code != 200 {
		t.Fatalf("with the token: %d %s", code, b)
	}
}

// The Host header must name the address listened on (DNS rebinding):
// another name is refused on every route, the page too.
func TestHostHeader(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j})
	_, port, _ := net.SplitHostPort(ts.Addr)
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1:1", "attacker.localhost:" + port} {
		for _, p := range []string{"/", "/v1/children"} {
			code, _, b := do(t, "GET", ts.URL+p, map[string]string{"Host": host}, "")
			if code != http.StatusMisdirectedRequest || errorCode(t, b) != serve.CodeBadHost {
				t.Errorf("Host %s, %s: %d %s", host, p, code, b)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		if code, _, b := do(t, "GET", ts.URL+"/v1/children", map[string]string{"Host": host}, ""); code != 200 {
			t.Errorf("Host %s: %d %s", host, code, b)
		}
	}
}

// A POST needs a matching Origin or none.
func TestOriginOnPost(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j})
	url := ts.URL + "/v1/children/nobody/cancel"
	for _, o := range []string{"http://evil.example", "null", "https://" + ts.Addr, "http://" + ts.Addr + ".evil.example"} {
		code, _, b := do(t, "POST", url, map[string]string{"Origin": o}, "")
		if code != http.StatusForbidden || errorCode(t, b) != serve.CodeBadOrigin {
			t.Errorf("Origin %s: %d %s", o, code, b)
		}
	}
	for _, o := range []string{"", "http://" + ts.Addr} {
		code, _, b := do(t, "POST", url, map[string]string{"Origin": o}, "")
		if code != http.StatusNotFound || errorCode(t, b) != serve.CodeUnknownChild {
			t.Errorf("Origin %q: %d %s (want the cancel's own answer)", o, code, b)
		}
	}
}

// Bodies and headers are bounded; a slow header, an idle connection are
// closed (with the package's bounds, and shortened ones to see them act).
func TestBounds(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j})
	code, _, b := do(t, "POST", ts.URL+"/v1/children/a/cancel", map[string]string{"Content-Type": "application/json"}, `{"reason":"`+strings.Repeat("x", serve.DefaultMaxBodyBytes)+`"}`)
	if code != http.StatusRequestEntityTooLarge || errorCode(t, b) != serve.CodeTooLarge {
		t.Errorf("a large body: %d %s", code, b)
	}
	code, _, _ = do(t, "GET", ts.URL+"/v1/children", map[string]string{"X-Big": strings.Repeat("y", 2*serve.MaxHeaderBytes)}, "")
	if code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a large header: %d", code)
	}
	srv := serve.HTTPServer(http.NotFoundHandler(), nil)
	if srv.ReadHeaderTimeout != serve.ReadHeaderTimeout || srv.IdleTimeout != serve.IdleTimeout || srv.WriteTimeout != serve.WriteTimeout ||
		srv.MaxHeaderBytes != serve.MaxHeaderBytes || serve.ReadHeaderTimeout <= 0 || serve.IdleTimeout <= 0 {
		t.Fatalf("HTTPServer's bounds: %+v", srv)
	}
	// Slowloris: half a header, then nothing; an idle keep-alive
	// connection: both are closed by the server.
	srv.ReadHeaderTimeout, srv.IdleTimeout = 200*time.Millisecond, 200*time.Millisecond
	srv.Handler = ts.Server
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	for _, first := range []string{"GET /v1/children HTTP/1.1\r\nHost: " + l.Addr().String() + "\r\n", ""} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, first)
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err = io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Errorf("%q: the server did not close the connection: %v", first, err)
		}
	}
}

// The number of streams is bounded; a stream closed frees its place.
func TestStreamsBounded(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j, MaxStreams: 2})
	a := openStream(t, ts.URL+"/v1/events", nil)
	openStream(t, ts.URL+"/v1/events", nil)
	code, hdr, b := do(t, "GET", ts.URL+"/v1/events", nil, "")
	if code != http.StatusServiceUnavailable || errorCode(t, b) != serve.CodeTooManyStreams || hdr.Get("Retry-After") == "" {
		t.Fatalf("a third stream: %d %s", code, b)
	}
	a.resp.Body.Close()
	eventually(t, 10*time.Second, "a closed stream frees its place", func() bool {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// --read-only turns cancel off, before anything is read.
func TestReadOnly(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	w := wrapper(t, j, "job")
	ts := start(t, serve.Config{Journal: j, ReadOnly: true})
	code, _, b := do(t, "POST", ts.URL+"/v1/children/job/cancel", nil, "")
	if code != http.StatusForbidden || errorCode(t, b) != serve.CodeReadOnly {
		t.Fatalf("%d %s", code, b)
	}
	if w.ProcessState != nil {
		t.Fatal("the wrapper ended")
	}
}

// Cancel follows lcwrap cancel's rules: refusals are the answer, with
// their reason and code; a verified wrapper gets SIGTERM, after the
// request is in the journal.
func TestCancel(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	w := wrapper(t, j, "job")
	pt.AppendJournal(t, j, pt.AdoptedCreated("adopted", pt.LocalIdentity(os.Getpid(), 1)))
	wrapper(t, j, "done", event.StateCompleted)
	pt.AppendJournal(t, j, events("noid", 1, 4)...)
	ts := start(t, serve.Config{Journal: j})
	for id, want := range map[string]struct {
		status int
		code   string
	}{
		"nobody":   {404, serve.CodeUnknownChild},
		"adopted":  {403, serve.CodeNoAuthority},
		"done":     {409, serve.CodeNotRunning},
		"noid":     {403, serve.CodeNoAuthority},
		"two%20ws": {400, serve.CodeBadRequest},
	} {
		code, _, b := do(t, "POST", ts.URL+"/v1/children/"+id+"/cancel", nil, "")
		if code != want.status || errorCode(t, b) != want.code {
			t.Errorf("%s: %d %s; want %d %s", id, code, b, want.status, want.code)
		}
	}
	code, _, b := do(t, "POST", ts.URL+"/v1/children/job/cancel", map[string]string{"Content-Type": "application/json"}, `{"reason":"superseded"}`)
	if code != http.StatusAccepted {
		t.Fatalf("job: %d %s", code, b)
	}
	var ans serve.CancelAnswer
	if err := json.Unmarshal(b, &ans); err != nil || ans.WrapperPID != w.Process.Pid || ans.Signal != "SIGTERM" {
		t.Fatalf("%v %+v", err, ans)
	}
	err := w.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("the wrapper: %v", err)
	}
	b, _ = os.ReadFile(j)
	if !strings.Contains(string(b), `"reason":"superseded"`) {
		t.Fatal("the request is not in the journal")
	}
	code, _, b = do(t, "POST", ts.URL+"/v1/children/job/cancel", nil, `{"reason":1}`)
	if code != 400 {
		t.Errorf("a bad body: %d %s", code, b)
	}
}

// GET /v1/children is status --json: the same document, ?all and ?state.
func TestChildrenIsStatus(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	pt.AppendJournal(t, j, events("b", 1, 3)...)
	pt.AppendJournal(t, j, pt.Ev("b", 4, event.KindStateChanged, event.StateWaiting))
	pt.AppendJournal(t, j, events("c", 1, 3)...)
	pt.AppendJournal(t, j, pt.Ev("c", 4, event.KindTerminal, event.StateCompleted))
	ts := start(t, serve.Config{Journal: j})
	tr := projection.NewTracker(j)
	if err := tr.Refresh(); err != nil {
		t.Fatal(err)
	}
	for q, n := range map[string]int{"": 2, "?all=1": 3, "?all=1&state=waiting": 1, "?state=running,waiting": 2} {
		code, hdr, b := do(t, "GET", ts.URL+"/v1/children"+q, nil, "")
		var rep struct {
			Schema   string
			Input    string
			Children []struct{ ChildID, Display string }
		}
		if code != 200 || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("%s: %d %s", q, code, b)
		}
		if len(rep.Children) != n || rep.Schema != projection.ReportSchema || rep.Input != j || hdr.Get(serve.CursorHeader) != "11" {
			t.Errorf("%s: %d children, schema %s, cursor %s, input %s", q, len(rep.Children), rep.Schema, hdr.Get(serve.CursorHeader), rep.Input)
		}
		if q == "?all=1" {
			want := tr.Report(time.Now(), true)
			for i := range want.Children {
				if want.Children[i].ChildID != rep.Children[i].ChildID || want.Children[i].Display != rep.Children[i].Display {
					t.Errorf("child %d: %s %s, status says %s %s", i, rep.Children[i].ChildID, rep.Children[i].Display, want.Children[i].ChildID, want.Children[i].Display)
				}
			}
		}
	}
	if code, _, b := do(t, "GET", ts.URL+"/v1/children?all=maybe", nil, ""); code != 400 || errorCode(t, b) != serve.CodeBadRequest {
		t.Errorf("?all=maybe: %d %s", code, b)
	}
	code, _, b := do(t, "GET", ts.URL+"/v1/children/b?limit=2", nil, "")
	var ca struct {
		Child   struct{ Display string }
		Events  []serve.ChildEvent
		Omitted int64
	}
	if code != 200 || json.Unmarshal(b, &ca) != nil || ca.Child.Display != "waiting" || len(ca.Events) != 2 || ca.Omitted != 2 || ca.Events[1].Cursor != 7 {
		t.Errorf("one child: %d %s", code, b)
	}
	if code, _, b := do(t, "GET", ts.URL+"/v1/children/zz", nil, ""); code != 404 || errorCode(t, b) != serve.CodeUnknownChild {
		t.Errorf("an unknown child: %d %s", code, b)
	}
	code, _, b = do(t, "GET", ts.URL+"/v1/snapshot?reason=session_open", nil, "")
	var snap event.Snapshot
	if code != 200 || json.Unmarshal(b, &snap) != nil || !strings.HasSuffix(snap.SnapshotID, "/session_open") || len(snap.Children) == 0 {
		t.Errorf("snapshot: %d %s", code, b)
	}
	if code, _, b := do(t, "GET", ts.URL+"/v1/snapshot?reason=whim", nil, ""); code != 400 {
		t.Errorf("snapshot ?reason=whim: %d %s", code, b)
	}
}

// The stream: every line after the cursor with id = journalSequence,
// then live lines; Last-Event-ID wins over ?after; keep-alives come.
func TestEventsFromCursor(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 5)...)
	ts := start(t, serve.Config{Journal: j, KeepAlive: 50 * time.Millisecond})
	s := openStream(t, ts.URL+"/v1/events?after=2", nil)
	if got := s.ids(t, 3); strings.Join(got, ",") != "3,4,5" {
		t.Fatalf("after 2: %v", got)
	}
	pt.AppendJournal(t, j, events("a", 6, 2)...)
	m := s.next(t, 20*time.Second)
	var ev event.Event
	if m.ID != "6" || json.Unmarshal([]byte(m.Data), &ev) != nil || ev.ChildID != "a" {
		t.Fatalf("live: %+v", m)
	}
	keep := false
	eventually(t, 10*time.Second, "a keep-alive comment", func() bool {
		for {
			select {
			case m := <-s.msgs:
				keep = keep || m.Comment && m.Data == "keep-alive"
			default:
				return keep
			}
		}
	})
	r := openStream(t, ts.URL+"/v1/events?after=1", map[string]string{"Last-Event-ID": "5"})
	if got := r.ids(t, 2); strings.Join(got, ",") != "6,7" {
		t.Fatalf("Last-Event-ID 5: %v", got)
	}
	for _, bad := range []string{"-1", "x", "1.5"} {
		if code, _, b := do(t, "GET", ts.URL+"/v1/events?after="+bad, nil, ""); code != 400 || errorCode(t, b) != serve.CodeBadCursor {
			t.Errorf("after=%s: %d %s", bad, code, b)
		}
	}
}

// A restarted server and a reconnecting client: no gap, no duplicate,
// while a writer keeps appending.
func TestResumeAcrossRestart(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 10)...)
	ts := start(t, serve.Config{Journal: j})
	s := openStream(t, ts.URL+"/v1/events", nil)
	got := s.ids(t, 10)
	stop := make(chan struct{})
	written := make(chan int64)
	go func() {
		seq := int64(11)
		for {
			select {
			case <-stop:
				written <- seq - 1
				return
			default:
			}
			pt.AppendJournal(t, j, events("a", seq, 1)...)
			seq++
		}
	}()
	got = append(got, s.ids(t, 5)...)
	ts.Close() // the server goes away mid-stream
	for range s.msgs {
		// what came before the close, whole messages only
	}
	last := got[len(got)-1]
	ts2 := start(t, serve.Config{Journal: j})
	r := openStream(t, ts2.URL+"/v1/events", map[string]string{"Last-Event-ID": last})
	close(stop)
	n := <-written
	var lastN int64
	fmt.Sscan(last, &lastN)
	got = append(got, r.ids(t, int(n-lastN))...)
	for i, id := range got {
		if id != fmt.Sprint(i+1) {
			t.Fatalf("message %d has id %s: a gap or a duplicate (%v)", i+1, id, got)
		}
	}
}

// A client that takes no writes is cut off at its last whole event, with
// its cursor in the log, while another client gets every line; it then
// resumes from its cursor with nothing missing.
func TestSlowClientCutOff(t *testing.T) {
	const n = 6000
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	ev := events("a", 1, n)
	for k := range ev {
		ev[k] = pt.WithActivity(ev[k], strings.Repeat("w", 900))
	}
	pt.AppendJournal(t, j, ev...)
	ts := start(t, serve.Config{Journal: j, StreamStall: 300 * time.Millisecond})
	slow, err := net.Dial("tcp", ts.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", ts.Addr, token)
	fast := openStream(t, ts.URL+"/v1/events", nil)
	if got := fast.ids(t, n); got[n-1] != fmt.Sprint(n) {
		t.Fatalf("the fast client: last id %s", got[n-1])
	}
	eventually(t, 30*time.Second, "the slow client cut off", func() bool { return strings.Contains(ts.Log.String(), "cut off") })
	if !strings.Contains(ts.Log.String(), "resumes from the last id it read") {
		t.Fatalf("log: %s", ts.Log.String())
	}
	// What the slow client had, then the end of its connection.
	resp, err := http.ReadResponse(bufio.NewReader(slow), nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := make(chan sseMsg, n+10)
	readSSE(bufio.NewReader(resp.Body), msgs)
	close(msgs)
	var ids []string
	for m := range msgs {
		if !m.Comment && m.Event == "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) >= n {
		t.Fatalf("the slow client got all %d lines: not cut off", len(ids))
	}
	for i, id := range ids {
		if id != fmt.Sprint(i+1) {
			t.Fatalf("slow client message %d has id %s", i+1, id)
		}
	}
	last := "0"
	if len(ids) > 0 {
		last = ids[len(ids)-1]
	}
	var logged int
	var last2 string
	if _, err := fmt.Sscanf(ts.Log.String()[strings.Index(ts.Log.String(), "up to cursor"):], "up to cursor %q", &last2); err != nil {
		t.Fatalf("no cursor in the log: %v: %s", err, ts.Log.String())
	}
	fmt.Sscan(last2, &logged)
	if logged > len(ids) {
		t.Fatalf("the log says cursor %d was delivered; the client has %d", logged, len(ids))
	}
	r := openStream(t, ts.URL+"/v1/events", map[string]string{"Last-Event-ID": last})
	rest := r.ids(t, n-len(ids))
	if rest[0] != fmt.Sprint(len(ids)+1) || rest[len(rest)-1] != fmt.Sprint(n) {
		t.Fatalf("resumed: %s … %s", rest[0], rest[len(rest)-1])
	}
}

// A line that is not an event: a `blocked` message with no id, and the
// stream waits there; after a repair, a `notice` (the quarantine record,
// line 5, is the journal's own and not sent) and the lines after it.
func TestNonEventLines(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j})
	s := openStream(t, ts.URL+"/v1/events", nil)
	s.ids(t, 3)
	pt.AppendRaw(t, j, "this is not json\n")
	m := s.next(t, 20*time.Second)
	var bl serve.Blocked
	if m.Event != "blocked" || m.ID != "" || json.Unmarshal([]byte(m.Data), &bl) != nil || bl.Line != 4 {
		t.Fatalf("blocked: %+v", m)
	}
	if _, err := journalRepair(j); err != nil {
		t.Fatal(err)
	}
	m = s.next(t, 20*time.Second)
	var no serve.Notice
	if m.Event != "notice" || m.ID != "" || json.Unmarshal([]byte(m.Data), &no) != nil || no.Kind != "quarantined" {
		t.Fatalf("notice: %+v", m)
	}
	pt.AppendJournal(t, j, events("a", 4, 1)...)
	if m := s.next(t, 20*time.Second); m.ID != "6" || m.Event != "" {
		t.Fatalf("after the repair: %+v", m)
	}
}

// A stream whose cursor is further back than the shared reader keeps
// reads the journal itself, then joins the shared reader: every line
// once, in order, across the join, while lines keep coming.
func TestStreamBehindTheHub(t *testing.T) {
	const n = 10000 // more than the shared reader keeps
	j := pt.WriteJournal(t, events("a", 1, n)...)
	ts := start(t, serve.Config{Journal: j})
	var before []string
	eventually(t, 60*time.Second, "the shared reader has read the journal", func() bool {
		code, hdr, _ := do(t, "GET", ts.URL+"/v1/children", nil, "")
		return code == 200 && hdr.Get(serve.CursorHeader) == fmt.Sprint(n)
	})
	s := openStream(t, ts.URL+"/v1/events?after=5", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(0); i < 20; i++ {
			pt.AppendJournal(t, j, events("a", n+1+5*i, 5)...)
		}
	}()
	before = s.ids(t, n+100-5)
	<-done
	for i, id := range before {
		if id != fmt.Sprint(i+6) {
			t.Fatalf("message %d has id %s (a gap or a duplicate)", i, id)
		}
	}
}
