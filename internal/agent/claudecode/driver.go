package claudecode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
func (d Driver) Prepare(ctx context.Context, l *agent.Launch) error {
	l.Recorded = RecordedArgv(l.Argv) // a prompt is never recorded
	a := Inspect(l.Argv[1:])
	switch {
	case a.Subcommand != "" || a.Info:
		return nil // no session to see
	case a.Background:
		l.Warnings = append(l.Warnings, "claude --bg: the session goes on after this process ends; lcwrap reports the process only")
		return nil
	}
	hooks := true
	if a.SkipsHooks != "" {
		hooks = false
		l.Warnings = append(l.Warnings, "claude "+a.SkipsHooks+" runs no hooks, so lcwrap sees only the process this run")
	}
	if a.Settings && hooks {
		// Its own --settings must merge with lcwrap's: tried once the
		// hooks' address is known, before anything is started.
		if _, _, err := MergeSettings(l.Argv[1:], InjectedSettings("http://127.0.0.1:1/hook", d.Exe), d.dir(), nil); err != nil {
			hooks = false
			l.Warnings = append(l.Warnings, "the command passes --settings already and "+err.Error()+", so lcwrap adds no hooks of its own this run (only the process is reported); to see its sessions, install lcwrap's hook in your settings: lcwrap hook claude-code --print-settings")
		}
	}
	var stream *Stream
	if a.Print && a.StreamJSON {
		stream = NewStream(l.Tracker, !hooks)
		l.Stdout = stream
	}
	added := &agent.AgentLaunch{Agent: Source}
	var srv *hookhttp.Server
	var q *payloads
	var tmp string // the merged settings file, removed when the run ends
	var rmu sync.Mutex
	rejected := map[string]int{}
	if hooks {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("claude-code: cannot listen for hooks on 127.0.0.1: %w", err)
		}
		token := make([]byte, 16)
		rand.Read(token)
		tok := hex.EncodeToString(token)
		q = newPayloads(l.Tracker)
		srv = hookhttp.Serve(ln, tok, q.put, func(reason string) {
			rmu.Lock()
			rejected[reason]++
			rmu.Unlock()
		})
		url := "http://" + srv.Addr() + "/hook"
		js := InjectedSettings(url, d.Exe)
		if a.Settings {
			rest, at, err := MergeSettings(l.Argv[1:], js, d.dir(), func(merged []byte) (string, error) {
				f, err := os.CreateTemp("", "lcwrap-claude-settings-*.json") // 0600
				if err != nil {
					return "", err
				}
				tmp = f.Name()
				_, err = f.Write(merged)
				return tmp, errors.Join(err, f.Close())
			})
			if err != nil { // checked above: only a file changed meanwhile
				srv.Close(0)
				if tmp != "" {
					os.Remove(tmp)
				}
				return err
			}
			l.Argv = slices.Concat(l.Argv[:1], rest)
			added.MergedAt = int64(at + 1)
			added.Evidence = append(added.Evidence, "its own --settings (argument "+fmt.Sprint(at+1)+") replaced by the same settings with lcwrap's hooks added after its own")
		} else {
			l.Argv = slices.Concat(l.Argv[:1], []string{"--settings", js}, l.Argv[1:])
			added.AddedArgs, added.AddedAt = []string{"--settings", js}, 1 // right after the command's name
		}
		l.Env = append(l.Env, EnvHookURL+"="+url, EnvHookToken+"="+tok)
		added.Evidence = append(added.Evidence, fmt.Sprintf("hooks: HTTP to %s for %d events (token in $%s), a command hook (%s hook claude-code --relay) for SessionStart", url, len(Events)-len(commandOnly), EnvHookToken, d.Exe))
	}
	if stream != nil {
		added.Evidence = append(added.Evidence, "stream-json: its output, read as it passes through, unchanged")
	}
	if !hooks && stream == nil {
		return nil
	}
	l.Added = added
	var mu sync.Mutex
	l.Close = func() {
		mu.Lock()
		defer mu.Unlock()
		if srv != nil {
			srv.Close(2 * time.Second)
			srv = nil
			q.close() // every payload taken is recorded before the children end
		}
		if tmp != "" {
			os.Remove(tmp)
			tmp = ""
		}
		if stream != nil {
			stream.Flush()
		}
	}
	l.Report = func(term *event.Terminal) {
		if stream != nil {
			event.SetPtr(&term.Extra, agent.KeyAgentReport, stream.Report())
		}
		rmu.Lock()
		if len(rejected) > 0 {
			term.Extra.Set(agent.KeyHookRequestsRejected, agent.IntMap(maps.Clone(rejected)))
		}
		rmu.Unlock()
	}
	return nil
}

// ChildPrefix starts the child id of every Claude Code session.
const ChildPrefix = "cc"

// ChildPrefix implements the optional prefix of agent.Driver.
func (Driver) ChildPrefix() string { return ChildPrefix }

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
	go func() {
		defer close(q.done)
		for b := range q.c {
			t.Apply(Normalize(b))
		}
	}()
	return q
}

// put queues one payload (it waits only when 1024 are queued already).
func (q *payloads) put(b []byte) { q.c <- b }

// close records what is queued and stops; call it once no put can come.
func (q *payloads) close() {
	close(q.c)
	<-q.done
}
