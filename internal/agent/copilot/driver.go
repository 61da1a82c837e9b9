package copilot

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Source is the source of Copilot CLI's session events, and the --agent
// value.
const Source = "copilot"

// ChildPrefix starts the child id of every Copilot session.
const ChildPrefix = "cp"

// Limits is what Copilot CLI's hooks can never say, recorded in every
// created event of its sessions and sub-agents.
const Limits = "Copilot CLI's own hook reports and session file: when a session or sub-agent started, was prompted, ended a tool call, waited for a permission and how it was answered (by whom, as Copilot says), ended a turn or ended, and its tokens; not when a tool call began (lcwrap registers no hook whose failure stops a tool), not whether its work was done, nothing between two reports, no cost, no cancel authority"

// Driver is the Copilot CLI integration for runs lcwrap launches.
type Driver struct {
	// Exe is the absolute path of the lcwrap binary, for the command
	// hooks that relay each payload to the wrapper.
	Exe string
}

// Name implements agent.Driver.
func (Driver) Name() string { return Source }

// Recognize implements agent.Driver: the command's base name is copilot.
func (Driver) Recognize(argv []string) bool { return agent.BaseName(argv) == "copilot" }

// Prepare implements agent.Driver: the hooks come as a plugin of the
// run's own (--plugin-dir, right after the command's name); with -p and
// --output-format json the output is read for Copilot's report.
func (d Driver) Prepare(_ context.Context, l agent.Launch) (agent.Run, error) {
	r := &run{Base: l.Base(Source, ChildPrefix, Limits)}
	c := &r.Cmd
	c.Recorded = RecordedArgv(l.Argv)
	a := Inspect(l.Argv[1:])
	if a.Subcommand != "" || a.Info {
		return r, nil // no session to see
	}
	dir, err := writePlugin(d.Exe)
	if err != nil {
		return nil, fmt.Errorf("copilot: cannot write this run's hooks plugin: %w", err)
	}
	home, _ := os.UserHomeDir()
	r.fol = newFollower(r.Tracker, CopilotHome(os.Getenv("COPILOT_HOME"), home))
	srv, err := agent.StartHookServer(r.Tracker, (&relay{fol: r.fol}).normalize)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("copilot: %w", err)
	}
	r.srv, r.dir = srv, dir
	added := []string{"--plugin-dir", dir}
	c.Argv = slices.Concat(l.Argv[:1], added, l.Argv[1:])
	c.Env = append(c.Env, srv.Env()...)
	launch := &agent.AgentLaunch{Agent: Source, AddedArgs: added, AddedAt: 1,
		Evidence: []string{fmt.Sprintf("hooks: a plugin of this run's own (%s, removed when the run ends) with a command hook (%s hook copilot --event NAME --relay) for %d events, relaying to %s (token in $%s)", dir, d.Exe, len(Events), srv.URL, agent.EnvHookToken)}}
	if r.fol.home != "" {
		launch.Evidence = append(launch.Evidence, "session file: "+filepath.Join(r.fol.home, "session-state", "<session id>", "events.jsonl")+
			" of each session its sessionStart hook names, followed read-only until the run ends (permission.requested, permission.completed, session.usage_record: Copilot's own tokens, no cost)")
	}
	if a.Prompt && a.Output == "json" {
		r.stream = NewStream()
		launch.Evidence = append(launch.Evidence, "json output: its result line, read as it passes through, unchanged")
	}
	c.Added = launch
	return r, nil
}

// run is one launched copilot: its hook server and plugin, and its json
// output, as it has them.
type run struct {
	agent.Base
	stream *Stream
	srv    *agent.HookServer
	fol    *follower // the sessions' files

	once sync.Once
	dir  string
}

// Stdout implements agent.Run.
func (r *run) Stdout() io.Writer {
	if r.stream == nil {
		return nil
	}
	return r.stream
}

// Close implements agent.Run: every payload taken is recorded, the plugin
// goes, the output's last line is read.
func (r *run) Close() {
	r.once.Do(func() {
		if r.srv != nil {
			r.srv.Close()
		}
		if r.fol != nil {
			r.fol.close() // after the hooks: no session starts following now
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
}

// Adopt implements agent.Driver: no shape is followed yet.
func (Driver) Adopt(_ context.Context, req agent.AdoptRequest) (agent.Adoption, error) {
	return nil, agent.NotSupported(Source, req.Target)
}

// HookSettings implements agent.Hooks.
func (Driver) HookSettings(exe string) string { return UserSettings(exe) }

// Hook implements agent.Hooks: one payload of `lcwrap hook copilot
// --event NAME`.
func (Driver) Hook(in io.Reader, call agent.HookCall) []string {
	if call.Event == "" {
		io.Copy(io.Discard, in)
		return []string{"no --event: Copilot's payloads do not name their event; not recorded"}
	}
	raw, handled, warnings := agent.RelayHook(in, call.Relay, call.Wait, func(raw []byte) []byte { return Wrap(call.Event, raw) })
	if handled {
		return warnings
	}
	return call.Record(Source, ChildPrefix, Limits, Normalize(call.Event, raw, nil))
}

var (
	_ agent.Driver = Driver{}
	_ agent.Hooks  = Driver{}
)
