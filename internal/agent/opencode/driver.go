package opencode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	// OnConnect, when set, sees the first event of each connection (n
	// counts them from 1) before it is mapped; false drops the
	// connection and ends Run.
	OnConnect func(n int64, first []byte) bool
	// OnBeat, when set, is called after each server.heartbeat.
	OnBeat func()
	// UntilRefused ends Run once a connection is refused: nothing listens
	// there any more (a server adopted by its URL).
	UntilRefused bool

	mu        sync.Mutex
	connected int64
	skipped   int64
}

// Run follows until ctx ends, and returns "" then; otherwise why it
// stopped on its own (a connection refused with UntilRefused, or
// OnConnect's refusal).
func (f *Follower) Run(ctx context.Context) string {
	addr := strings.TrimPrefix(f.URL, "http://")
	for ctx.Err() == nil {
		body, err := openEvents(ctx, addr)
		if err != nil && f.UntilRefused && errors.Is(err, syscall.ECONNREFUSED) {
			return "connection refused: nothing listens at " + addr
		}
		if err == nil {
			f.mu.Lock()
			f.connected++
			n := f.connected
			f.mu.Unlock()
			first, refused := true, false
			skipped, _ := ReadSSE(body, func(d []byte) {
				if refused {
					return
				}
				if first {
					first = false
					if f.OnConnect != nil && !f.OnConnect(n, d) {
						refused = true
						body.Close()
						return
					}
				}
				beats := f.Mapper.Heartbeats()
				f.Tracker.Apply(f.Mapper.Map(d))
				if f.OnBeat != nil && f.Mapper.Heartbeats() != beats {
					f.OnBeat()
				}
			})
			f.mu.Lock()
			f.skipped += skipped
			f.mu.Unlock()
			body.Close()
			if refused {
				return "its first event is not server.connected"
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return ""
}

// Connections is how many times the stream was opened.
func (f *Follower) Connections() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}
