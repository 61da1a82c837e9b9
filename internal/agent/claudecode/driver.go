package claudecode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// Limits is what Claude Code's hooks and stream can never say, recorded in
// every created event of its sessions and sub-agents.
const Limits = "Claude Code's own hook reports: when a session or sub-agent started, was prompted, called a tool, waited, ended a turn or ended; not whether its work was done, nothing between two reports, and no cancel authority"

// Driver is Claude Code's integration for runs lcwrap launches: its hooks
// reach the wrapper itself over HTTP on 127.0.0.1 (a per-run token in
// $LCWRAP_HOOK_TOKEN), and in print mode with stream-json its output is
// read as it passes through.
type Driver struct {
	// Exe is the absolute path of the lcwrap binary, for the command hook
	// of the events Claude Code runs no HTTP hook for.
	Exe string
	// Dir is the command's working directory (default: lcwrap's).
	Dir string
}

// dir is where a relative --settings path is read from: the working
// directory the command starts in (lcwrap's own).
func (d Driver) dir() string {
	if d.Dir != "" {
		return d.Dir
	}
	wd, _ := os.Getwd()
	return wd
}

// Name implements agent.Driver.
func (Driver) Name() string { return Source }

// Recognize implements agent.Driver: the command's base name is claude.
func (Driver) Recognize(argv []string) bool { return agent.BaseName(argv) == "claude" }

// Prepare implements agent.Driver.
func (d Driver) Prepare(ctx context.Context, l agent.Launch) (agent.Run, error) {
	r := &run{Base: l.Base(Source, ChildPrefix, Limits)}
	c := &r.Cmd
	c.Recorded = RecordedArgv(l.Argv) // a prompt is never recorded
	a := Inspect(l.Argv[1:])
	switch {
	case a.Subcommand != "" || a.Info:
		return r, nil // no session to see
	case a.Background:
		c.Warnings = append(c.Warnings, "claude --bg: the session goes on after this process ends; lcwrap reports the process only")
		return r, nil
	}
	hooks := true
	if a.SkipsHooks != "" {
		hooks = false
		c.Warnings = append(c.Warnings, "claude "+a.SkipsHooks+" runs no hooks, so lcwrap sees only the process this run")
	}
	if a.Settings && hooks {
		// Its own --settings must merge with lcwrap's: tried once the
		// hooks' address is known, before anything is started.
		if _, _, err := MergeSettings(l.Argv[1:], InjectedSettings("http://127.0.0.1:1/hook", d.Exe), d.dir(), nil); err != nil {
			hooks = false
			c.Warnings = append(c.Warnings, "the command passes --settings already and "+err.Error()+", so lcwrap adds no hooks of its own this run (only the process is reported); to see its sessions, install lcwrap's hook in your settings: lcwrap hook claude-code --print-settings")
		}
	}
	if a.Print && a.StreamJSON {
		r.stream = NewStream(r.Tracker, !hooks)
	}
	added := &agent.AgentLaunch{Agent: Source}
	if hooks {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("claude-code: cannot listen for hooks on 127.0.0.1: %w", err)
		}
		token := make([]byte, 16)
		rand.Read(token)
		tok := hex.EncodeToString(token)
		r.q = newPayloads(r.Tracker)
		routes := hookhttp.Routes{hookhttp.HookPath: r.q.put}
		env := environ()
		own := userOTLP(env)
		if own == "" {
			r.tel = newTelemetry(r.Tracker)
			routes[OTLPPath] = r.tel.put
		}
		r.srv = hookhttp.ServeRoutes(ln, tok, routes, r.reject)
		url := "http://" + r.srv.Addr() + "/hook"
		if r.tel != nil {
			c.Env = append(c.Env, telemetryEnv("http://"+r.srv.Addr()+OTLPPath, tok)...)
			added.Evidence = append(added.Evidence, "telemetry: OTLP logs (http/json) to http://"+r.srv.Addr()+OTLPPath+": the agent's own tokens and cost per request, and who decided each permission")
		} else {
			c.Warnings = append(c.Warnings, "you export Claude Code's telemetry yourself ($"+own+"): lcwrap leaves it alone, so this run's cost and permission decisions are unknown to it")
		}
		tp, traceID, from, add := traceParent(env)
		if add {
			c.Env = append(c.Env, "TRACEPARENT="+tp)
		}
		added.TraceID, added.TraceFrom = traceID, from
		js := InjectedSettings(url, d.Exe)
		if a.Settings {
			rest, at, err := MergeSettings(l.Argv[1:], js, d.dir(), func(merged []byte) (string, error) {
				f, err := os.CreateTemp("", "lcwrap-claude-settings-*.json") // 0600
				if err != nil {
					return "", err
				}
				r.tmp = f.Name()
				_, err = f.Write(merged)
				return r.tmp, errors.Join(err, f.Close())
			})
			if err != nil { // checked above: only a file changed meanwhile
				r.srv.Close(0)
				if r.tmp != "" {
					os.Remove(r.tmp)
				}
				return nil, err
			}
			c.Argv = slices.Concat(l.Argv[:1], rest)
			added.MergedAt = int64(at + 1)
			added.Evidence = append(added.Evidence, "its own --settings (argument "+fmt.Sprint(at+1)+") replaced by the same settings with lcwrap's hooks added after its own")
		} else {
			c.Argv = slices.Concat(l.Argv[:1], []string{"--settings", js}, l.Argv[1:])
			added.AddedArgs, added.AddedAt = []string{"--settings", js}, 1 // right after the command's name
		}
		c.Env = append(c.Env, EnvHookURL+"="+url, EnvHookToken+"="+tok)
		added.Evidence = append(added.Evidence, fmt.Sprintf("hooks: HTTP to %s for %d events (token in $%s), a command hook (%s hook claude-code --relay) for SessionStart", url, len(Events)-len(commandOnly.Get()), EnvHookToken, d.Exe))
	}
	if r.stream != nil {
		added.Evidence = append(added.Evidence, "stream-json: its output, read as it passes through, unchanged")
	}
	if hooks || r.stream != nil {
		c.Added = added
	}
	return r, nil
}

// run is one launched claude: lcwrap's hook server for it, the settings
// file merged for it, and its stream-json output, as it has them.
type run struct {
	agent.Base
	stream *Stream // nil: not print mode with stream-json

	mu  sync.Mutex
	srv *hookhttp.Server // nil: no hooks, or closed
	q   *payloads
	tel *telemetry // nil: the user exports telemetry (or no hooks)
	tmp string     // the merged settings file, removed when the run ends

	rmu      sync.Mutex
	rejected map[string]int // hook requests refused, by reason
}

// Stdout implements agent.Run: stream-json is read as it passes.
func (r *run) Stdout() io.Writer {
	if r.stream == nil {
		return nil
	}
	return r.stream
}

func (r *run) reject(reason string) {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	if r.rejected == nil {
		r.rejected = map[string]int{}
	}
	r.rejected[reason]++
}

// Close implements agent.Run: the hook server stops (every payload taken
// is recorded first), the merged settings file goes, the stream's last
// line is read.
func (r *run) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		r.srv.Close(2 * time.Second)
		r.srv = nil
		r.q.close() // every payload taken is recorded before the children end
		if r.tel != nil {
			r.tel.close()
		}
	}
	if r.tmp != "" {
		os.Remove(r.tmp)
		r.tmp = ""
	}
	if r.stream != nil {
		r.stream.Flush()
	}
}

// Report implements agent.Run: the sessions end, stream-json's result is
// the agent's report, and refused hook requests are counted.
func (r *run) Report(term *event.Terminal) {
	r.Base.Report(term)
	if r.stream != nil {
		event.SetPtr(&term.Extra, agent.KeyAgentReport, r.stream.Report())
	}
	r.rmu.Lock()
	if len(r.rejected) > 0 {
		term.Extra.Set(agent.KeyHookRequestsRejected, agent.IntMap(maps.Clone(r.rejected)))
	}
	r.rmu.Unlock()
	if q := r.tel; q != nil {
		if n := (agent.IntMap{"payloads": int(q.nRead), "dropped": int(q.in.Dropped()), "unreadable": int(q.unreadable)}); n["payloads"]+n["dropped"]+n["unreadable"] > 0 {
			term.Extra.Set(agent.KeyTelemetry, n)
		}
	}
}

// ChildPrefix starts the child id of every Claude Code session.
const ChildPrefix = "cc"

// payloads records hook payloads in the order they arrived, on a
// goroutine of its own: the hook is answered as soon as its payload is
// queued, so a sink that waits (an event line sharing the agent's own
// output stream waits for its line to end) never holds the agent up.
type payloads struct {
	c    chan []byte
	done chan struct{}
}

func newPayloads(t *agent.Tracker) *payloads {
	q := &payloads{c: make(chan []byte, 1024), done: make(chan struct{})}
	go q.loop(t)
	return q
}

// transcriptLook is how often the transcripts of running sessions are
// read for an interruption (no hook reports one); nothing is read while no
// session runs.
const transcriptLook = 250 * time.Millisecond

// loop records each payload, reading first what its session's transcript
// says since the last look, so that an interruption is recorded in its
// place among the hooks; while a session runs, its transcript is also
// read every transcriptLook.
func (q *payloads) loop(t *agent.Tracker) {
	defer close(q.done)
	var tr transcripts
	look := time.NewTimer(transcriptLook)
	look.Stop()
	armed := false
	for {
		select {
		case b, ok := <-q.c:
			if !ok {
				look.Stop()
				return
			}
			out, p := normalize(b)
			if p != nil {
				tr.see(p.SessionID, p.Transcript)
				if obs := tr.read(p.SessionID); len(obs) > 0 {
					t.Apply(agent.Observe(obs...))
				}
			}
			t.Apply(out)
		case <-look.C:
			armed = false
			for _, s := range tr.sessions() {
				if t.Current(s) != event.StateRunning {
					continue
				}
				if obs := tr.read(s); len(obs) > 0 {
					t.Apply(agent.Observe(obs...))
				}
			}
		}
		if !armed {
			for _, s := range tr.sessions() {
				if t.Current(s) == event.StateRunning {
					look.Reset(transcriptLook)
					armed = true
					break
				}
			}
		}
	}
}

// put queues one payload (it waits only when 1024 are queued already).
func (q *payloads) put(b []byte) { q.c <- b }

// close records what is queued and stops; call it once no put can come.
func (q *payloads) close() {
	close(q.c)
	<-q.done
}

var (
	_ agent.Driver = Driver{}
	_ agent.Hooks  = Driver{}
)
