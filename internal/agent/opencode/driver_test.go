package opencode

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestInspect(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want Args
	}{
		{nil, Args{}},
		{[]string{"--port", "4096", "proj"}, Args{Port: "4096"}},
		{[]string{"run", "--format", "json", "hi"}, Args{Subcommand: "run", Format: "json"}},
		{[]string{"--log-level", "DEBUG", "run", "--format=json", "serve"}, Args{Subcommand: "run", Format: "json"}},
		{[]string{"serve", "--port", "1"}, Args{Subcommand: "serve", Port: "1"}},
		{[]string{"-m", "run", "x"}, Args{}}, // run is -m's value; x is a project
		{[]string{"--version"}, Args{Info: true}},
	} {
		if got := Inspect(c.argv); got != c.want {
			t.Errorf("Inspect(%q) = %+v, want %+v", c.argv, got, c.want)
		}
	}
}

// TestPrepare: the TUI gets --port right after the program; a port the
// user gave is followed as given; run and other commands are left as
// they are.
func TestPrepare(t *testing.T) {
	prep := func(argv ...string) *run {
		r, err := Driver{}.Prepare(context.Background(), agent.Launch{Argv: argv, ChildID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return r.(*run)
	}
	r := prep("opencode", "proj")
	a := r.Command().Argv
	if len(a) != 4 || a[1] != "--port" || a[3] != "proj" || r.url != "http://127.0.0.1:"+a[2] || r.Cmd.Added.AddedAt != 1 {
		t.Errorf("TUI: %q %q %+v", a, r.url, r.Cmd.Added)
	}
	r = prep("opencode", "--port", "4242")
	if a := r.Command().Argv; len(a) != 3 || r.url != "http://127.0.0.1:4242" {
		t.Errorf("TUI with --port: %q %q", a, r.url)
	}
	r = prep("opencode", "run", "hi")
	if r.url != "" || r.stream != nil || r.Cmd.Added == nil || !strings.Contains(r.Cmd.Added.Evidence[0], "only the process") {
		t.Errorf("run: %+v", r.Cmd.Added)
	}
	if r = prep("opencode", "run", "--format", "json", "hi"); r.stream == nil {
		t.Error("run --format json: no stream")
	}
	if r = prep("opencode", "serve"); r.url != "" || r.stream != nil || r.Cmd.Added != nil {
		t.Errorf("serve: %+v", r.Cmd.Added)
	}
}

// TestRecordedRunJSON reads `opencode run --format json` as recorded from
// opencode 1.18.33 (one shell call), in pieces.
func TestRecordedRunJSON(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "run-json-1.18.33.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t)
	s := NewRunStream(tr)
	data = bytes.TrimSuffix(data, []byte("\n"))
	for len(data) > 0 {
		n := min(len(data), 29)
		s.Write(data[:n])
		data = data[n:]
	}
	s.Flush()
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	want := "created created\nstate_changed starting\nstate_changed running\nactivity bash: echo lcwrap-mock-ok > lcwrap-mock.txt\n" +
		"activity bash done\nstate_changed waiting\nactivity turn ended; waiting for the user\ndiagnostic\nterminal lost\n"
	if got := sink.Summaries(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	r := s.Report()
	if r == nil || r.ReportedBy != Source || *r.Usage.Input != 20 || *r.Usage.Output != 10 || *r.TotalCostUSD != 0 || r.SessionID == "" {
		t.Errorf("report %+v", r)
	}
}

// TestFollower follows a loopback server that serves the recorded
// stream and then drops it: the events are read, and it connects again.
func TestFollower(t *testing.T) {
	rec := recorded(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/event" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(rec)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	tr, sink := newTracker(t)
	f := &Follower{URL: "http://" + ln.Addr().String(), Tracker: tr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	testtool.Eventually(t, "the follower connects again after the stream ends", func() bool { return f.Connections() >= 2 })
	cancel()
	<-done
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	if !strings.Contains(sink.Summaries(), "permission answered: reject") {
		t.Errorf("events:\n%s", sink.Summaries())
	}
}
