package opencode

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Driver is the opencode integration for runs lcwrap launches.
type Driver struct{}

// Name implements agent.Driver.
func (Driver) Name() string { return Source }

// Recognize implements agent.Driver: the command's base name is opencode.
func (Driver) Recognize(argv []string) bool { return agent.BaseName(argv) == "opencode" }

// Prepare implements agent.Driver. The TUI gets --port with a free
// loopback port (unless the user gave one) and lcwrap follows that
// server's /event; `opencode run --format json` is read as it passes
// through; plain `opencode run` starts a server lcwrap cannot find, so
// only the process is seen, and the created event says so.
func (Driver) Prepare(ctx context.Context, l agent.Launch) (agent.Run, error) {
	r := &run{Base: l.Base(Source, ChildPrefix, Limits)}
	a := Inspect(l.Argv[1:])
	switch {
	case a.Info:
		return r, nil
	case a.Subcommand == "run" && a.Format == "json":
		r.stream = NewRunStream(r.Tracker)
		r.Cmd.Added = &agent.AgentLaunch{Agent: Source, Evidence: []string{"--format json: its output, read as it passes through, unchanged"}}
	case a.Subcommand == "run":
		r.Cmd.Added = &agent.AgentLaunch{Agent: Source, Evidence: []string{"none: `opencode run` without --format json serves its events on a port of its own that lcwrap cannot learn; only the process is seen (sessions, tools, waits unknown)"}}
	case a.Subcommand == "":
		port := a.Port
		launch := &agent.AgentLaunch{Agent: Source}
		if port == "" || port == "0" {
			p, err := freePort()
			if err != nil {
				return nil, fmt.Errorf("opencode: no free loopback port: %w", err)
			}
			port = strconv.Itoa(p)
			added := []string{"--port", port}
			r.Cmd.Argv = slices.Concat(l.Argv[:1], added, l.Argv[1:])
			launch.AddedArgs, launch.AddedAt = added, 1
		}
		r.url = "http://127.0.0.1:" + port
		launch.Evidence = []string{"its server's /event stream at " + r.url + "/event (Server-Sent Events), followed while the process runs"}
		r.Cmd.Added = launch
		r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	}
	return r, nil
}

// freePort is a loopback port free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// run is one launched opencode: the server it follows, or the json output
// it reads.
type run struct {
	agent.Base
	stream *RunStream

	url    string // the TUI's server ("": none followed)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	follow *Follower
	once   sync.Once
}

// Stdout implements agent.Run.
func (r *run) Stdout() io.Writer {
	if r.stream == nil {
		return nil
	}
	return r.stream
}

// Started implements agent.Starter: the server is followed once the
// process runs.
func (r *run) Started(event.Identity) {
	if r.url == "" {
		return
	}
	r.follow = &Follower{URL: r.url, Tracker: r.Tracker}
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		r.follow.Run(r.ctx)
	}()
}

// Close implements agent.Run.
func (r *run) Close() {
	r.once.Do(func() {
		if r.cancel != nil {
			r.cancel()
		}
		if r.done != nil {
			<-r.done
		}
		if r.stream != nil {
			r.stream.Flush()
		}
	})
}

// Report implements agent.Run.
func (r *run) Report(term *event.Terminal) {
	r.Base.Report(term)
	switch {
	case r.stream != nil:
		event.SetPtr(&term.Extra, agent.KeyAgentReport, r.stream.Report())
	case r.follow != nil:
		event.SetPtr(&term.Extra, agent.KeyAgentReport, r.follow.Mapper.Report("/event"))
	}
}

// Adopt implements agent.Driver: no shape is followed yet.
func (Driver) Adopt(_ context.Context, req agent.AdoptRequest) (agent.Adoption, error) {
	return nil, agent.NotSupported(Source, req.Target)
}

var _ agent.Driver = Driver{}

// Follower follows one opencode server's /event on loopback (URL:
// http://127.0.0.1:PORT), connecting
// again (every 200ms) until its context ends: the server starts after the
// process does, and a dropped stream is taken up again (what passed
// meanwhile is not seen).
type Follower struct {
	URL     string
	Tracker *agent.Tracker
	Mapper  Mapper

	mu        sync.Mutex
	connected int64
	skipped   int64
}

// Run follows until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	addr := strings.TrimPrefix(f.URL, "http://")
	for ctx.Err() == nil {
		if body, err := openEvents(ctx, addr); err == nil {
			f.mu.Lock()
			f.connected++
			f.mu.Unlock()
			n, _ := ReadSSE(body, func(d []byte) { f.Tracker.Apply(f.Mapper.Map(d)) })
			f.mu.Lock()
			f.skipped += n
			f.mu.Unlock()
			body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Connections is how many times the stream was opened.
func (f *Follower) Connections() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}
