package gemini

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// Source is the source of the Gemini CLI's session events, and the
// --agent value.
const Source = "gemini"

// ChildPrefix starts the child id of every Gemini session.
const ChildPrefix = "gm"

// Limits is what the Gemini CLI's hooks and stream can never say,
// recorded in every created event of its sessions.
const Limits = "Gemini CLI's own hook and stream-json reports: when a session started, was prompted, called a tool, waited for a permission (the TUI only), ended a turn or ended, and (its telemetry) its tokens and permission decisions; its sub-agents (their transcripts and telemetry: when one started and ended, as Gemini says); not whether its work was done, nothing between two reports, not which tool calls were a sub-agent's (their hooks carry the session's id: they are the session's activity), no cost, not who decided a permission, no cancel authority"

// Driver is the Gemini CLI integration for runs lcwrap launches.
type Driver struct {
	// Exe is the absolute path of the lcwrap binary, for the command
	// hooks that relay each payload to the wrapper.
	Exe string
}

// Name implements agent.Driver.
func (Driver) Name() string { return Source }

// Recognize implements agent.Driver: the command's base name is gemini.
func (Driver) Recognize(argv []string) bool { return agent.BaseName(argv) == "gemini" }

// Prepare implements agent.Driver: the hooks go in a system-defaults
// settings file of the run's own, named in the agent's environment; with
// -o stream-json the output is read as it passes through.
func (d Driver) Prepare(_ context.Context, l agent.Launch) (agent.Run, error) {
	r := &run{Base: l.Base(Source, ChildPrefix, Limits)}
	r.sub = newSubagents(r.Tracker)
	c := &r.Cmd
	c.Recorded = RecordedArgv(l.Argv)
	a := Inspect(l.Argv[1:])
	if a.Subcommand != "" || a.Info {
		return r, nil // no session to see
	}
	added := &agent.AgentLaunch{Agent: Source}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	own := userTelemetry(l.Argv[1:], environ(), home, cwd)
	if own == "" {
		r.tel = newTelemetry(r.Tracker, r.sub)
	}
	path, err := d.hooks(r)
	if err != nil {
		c.Warnings = append(c.Warnings, "gemini: lcwrap adds no hooks this run: "+err.Error())
	} else {
		c.Env = append(c.Env, EnvSystemDefaults+"="+path)
		added.Evidence = append(added.Evidence, fmt.Sprintf("hooks: a command hook (%s hook gemini --relay) for %d events, in a settings file of this run's own ($%s=%s), relaying to %s (token in $%s)", d.Exe, len(Events), EnvSystemDefaults, path, r.srv.URL, agent.EnvHookToken))
	}
	if r.tel != nil && r.srv == nil {
		// No hooks (not root): the server is for the telemetry alone.
		srv, err := agent.StartHookServer(r.Tracker, (&ends{sub: r.sub}).normalize, telemetryRoutes(r.tel))
		if err != nil {
			c.Warnings = append(c.Warnings, "gemini: lcwrap reads no telemetry this run: "+err.Error())
		} else {
			r.srv = srv
		}
	}
	switch {
	case own != "":
		r.tel = nil // never read: nothing is queued
		c.Warnings = append(c.Warnings, "you configure Gemini CLI's telemetry yourself ("+own+"): lcwrap leaves it alone, so this run's tokens and permission decisions are unknown to it (Gemini reports no cost either way)")
	case r.srv == nil:
		r.tel.close()
		r.tel = nil
	default:
		c.Env = append(c.Env, telemetryEnv("http://"+r.srv.Addr, r.srv.Token)...)
		added.Evidence = append(added.Evidence, "telemetry: OTLP logs (http, JSON) to http://"+r.srv.Addr+agent.OTLPLogsPath+" set by $GEMINI_TELEMETRY_* for this run (no prompt text): Gemini's own tokens per model response (it reports no cost) and its permission decisions")
	}
	if r.srv != nil {
		c.Env = append(c.Env, r.srv.Env()...)
	}
	if a.Headless && a.Output == "stream-json" {
		r.stream = NewStream(r.Tracker, r.srv == nil)
		added.Evidence = append(added.Evidence, "stream-json: its output, read as it passes through, unchanged")
	}
	if len(added.Evidence) > 0 {
		c.Added = added
	}
	return r, nil
}

// hooks sets up the run's hook server and settings file, and returns the
// file's path; on error nothing is left behind.
func (d Driver) hooks(r *run) (string, error) {
	_, base, err := systemDefaults()
	if err != nil {
		return "", fmt.Errorf("the system defaults in force cannot be read (%v)", err)
	}
	settings, err := RunSettings(base, d.Exe)
	if err != nil {
		return "", fmt.Errorf("the system defaults in force cannot be merged: %v", err)
	}
	dir, err := runDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "system-defaults.json")
	if err := os.WriteFile(path, settings, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	var extra []hookhttp.Routes
	if r.tel != nil {
		extra = append(extra, telemetryRoutes(r.tel))
	}
	srv, err := agent.StartHookServer(r.Tracker, (&ends{sub: r.sub}).normalize, extra...)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	r.srv, r.dir = srv, dir
	return path, nil
}

// run is one launched gemini: its hook server and settings file, and its
// stream-json output, as it has them.
type run struct {
	agent.Base
	stream *Stream           // nil: not headless with stream-json
	srv    *agent.HookServer // nil: neither hooks nor telemetry
	tel    *telemetry        // nil: the user's own telemetry, or no server
	sub    *subagents        // the sessions' sub-agents, from transcripts and telemetry

	once sync.Once
	dir  string // the run's settings directory, removed when the run ends
}

// Stdout implements agent.Run.
func (r *run) Stdout() io.Writer {
	if r.stream == nil {
		return nil
	}
	return r.stream
}

// Close implements agent.Run: every payload taken is recorded, the
// settings file goes, the stream's last line is read.
func (r *run) Close() {
	r.once.Do(func() {
		if r.srv != nil {
			r.srv.Close()
		}
		if r.tel != nil {
			r.tel.close() // every payload taken is recorded
		}
		if r.dir != "" {
			os.RemoveAll(r.dir)
		}
		if r.stream != nil {
			r.stream.Flush()
		}
	})
}

// Report implements agent.Run.
func (r *run) Report(term *event.Terminal) {
	r.Base.Report(term)
	if r.stream != nil {
		event.SetPtr(&term.Extra, agent.KeyAgentReport, r.stream.Report())
	}
	if r.srv != nil {
		r.srv.Report(term)
	}
	if q := r.tel; q != nil {
		if n := (agent.IntMap{"payloads": int(q.nRead), "dropped": int(q.in.Dropped()), "unreadable": int(q.unreadable)}); n["payloads"]+n["dropped"]+n["unreadable"] > 0 {
			term.Extra.Set(agent.KeyTelemetry, n)
		}
	}
}

// environ is the process's environment (a seam for tests).
var environ = os.Environ

// Adopt implements agent.Driver: no shape is followed yet.
func (Driver) Adopt(_ context.Context, req agent.AdoptRequest) (agent.Adoption, error) {
	return nil, agent.NotSupported(Source, req.Target)
}

// HookSettings implements agent.Hooks.
func (Driver) HookSettings(exe string) string { return UserSettings(exe) }

// Hook implements agent.Hooks: one payload of `lcwrap hook gemini`.
func (Driver) Hook(in io.Reader, call agent.HookCall) []string {
	raw, handled, warnings := agent.RelayHook(in, call.Relay, call.Wait, nil)
	if handled {
		return warnings
	}
	return call.Record(Source, ChildPrefix, Limits, Normalize(raw))
}

var (
	_ agent.Driver = Driver{}
	_ agent.Hooks  = Driver{}
)

// ends drops the repeats of a session's end: Gemini CLI 0.61.0 calls
// SessionEnd three times when its TUI quits (measured), each one after the
// first counted as ignored, never a diagnostic of a second end. Payloads
// are normalized one at a time (HookServer's order), so it needs no lock.
type ends struct {
	ended map[string]bool
	sub   *subagents // nil: sub-agents are not read
}

// normalize also reads the session's sub-agent transcripts first (what
// they show is applied before the payload's own observations).
func (e *ends) normalize(raw []byte) agent.Outcome {
	e.sub.hook(raw)
	out := Normalize(raw)
	for _, o := range out.Observations {
		switch o.Kind {
		case agent.SessionStarted:
			delete(e.ended, o.Session)
		case agent.SessionEnded:
			if e.ended[o.Session] {
				return agent.Ignore(o.Session, "SessionEnd again")
			}
			if e.ended == nil {
				e.ended = map[string]bool{}
			}
			if len(e.ended) < 1024 {
				e.ended[o.Session] = true
			}
		}
	}
	return out
}
