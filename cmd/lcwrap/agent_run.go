package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/agent/codex"
	"github.com/lcwrap/lcwrap/internal/agent/copilot"
	"github.com/lcwrap/lcwrap/internal/agent/gemini"
	"github.com/lcwrap/lcwrap/internal/agent/opencode"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

// The --agent values besides a driver's name.
const (
	agentAuto = "auto" // recognise the agent by the command's base name
	agentNone = "none" // no agent integration at all
)

// agentNames are the --agent values: the two above, then every driver's
// name (agentDriver's).
func agentNames() []string {
	return []string{agentAuto, agentNone, claudecode.Source, codex.Source, gemini.Source, copilot.Source, opencode.Source}
}

// agentDriver is the registry of agent integrations: the driver named
// name, or nil when none is.
func agentDriver(name string) agent.Driver {
	// lcwrap's own path, for the hooks that call lcwrap back: asked only
	// for a driver that has them (a plain run asks for none).
	exe := func() string { p, _ := os.Executable(); return p }
	switch name {
	case claudecode.Source:
		return claudecode.Driver{Exe: exe()}
	case codex.Source:
		return codex.Driver{Exe: exe()}
	case gemini.Source:
		return gemini.Driver{Exe: exe()}
	case copilot.Source:
		return copilot.Driver{Exe: exe()}
	case opencode.Source:
		return opencode.Driver{}
	}
	return nil
}

// agentByName is the driver a command's base name suggests (node running
// a script: the script's), or "": the one look-up made for a command that
// is no agent, so that nothing of the agent packages runs for it. The
// driver's own Recognize then decides.
func agentByName(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	name := filepath.Base(argv[0])
	if (name == "node" || name == "nodejs") && len(argv) > 1 {
		name = filepath.Base(argv[1])
	}
	switch name {
	case "claude":
		return claudecode.Source
	case "codex", "codex.js":
		return codex.Source
	case "gemini":
		return gemini.Source
	case "copilot":
		return copilot.Source
	case "opencode":
		return opencode.Source
	}
	return ""
}

// selectAgent picks the driver for argv: by name (--agent NAME), by
// recognition (auto or ""), or none. It returns nil when none applies,
// and ok=false when name is no driver's.
func selectAgent(name string, argv []string) (d agent.Driver, ok bool) {
	switch name {
	case agentNone:
		return nil, true
	case agentAuto, "":
		if d = agentDriver(agentByName(argv)); d != nil && d.Recognize(argv) {
			return d, true
		}
		return nil, true
	}
	d = agentDriver(name)
	return d, d != nil
}

// agentFlagDef is --agent's definition (see journalFlagDefs); its usage
// names agentNames' entries, which TestAgentFlagNamesEveryAgent checks.
var agentFlagDef = &cli.StringFlag{Name: "agent", Value: agentAuto, Usage: "agent integration: " + agentAuto + ", " + agentNone + ", " + claudecode.Source + ", " + codex.Source + ", " + gemini.Source + ", " + copilot.Source + ", " + opencode.Source + " (auto: by the command's name; none: off). It reads the agent's own evidence (hooks, event streams) for its sessions"}

// agentRun is the agent integration of one run.
type agentRun struct {
	run   agent.Run
	tapTo io.Writer           // what reads the child's stdout (nil: nothing)
	tap   *emit.Queue[[]byte] // its queue, once the stream is tapped

	closeOnce sync.Once
}

// prepareAgent picks the agent integration for cfg.Argv and lets it
// prepare the run: its command line, environment and created details,
// and the seams that end its children before the process's terminal
// event. It returns nil when no integration applies. A bad --agent is a
// usage error; an integration that cannot be set up is one warning line,
// and the command runs as it was.
func prepareAgent(ctx context.Context, cmd flagReader, std stdio, cfg *supervise.Config) (*agentRun, error) {
	name := cmd.String("agent")
	d, ok := selectAgent(name, cfg.Argv)
	if !ok {
		return nil, usagef(cmd, "--agent %q: choose one of %s", name, strings.Join(agentNames(), ", "))
	}
	if d == nil {
		return nil, nil
	}
	if cfg.Restart.Policy != supervise.RestartNo {
		fmt.Fprintf(std.err, "lcwrap: --restart: the %s integration is off (its hooks belong to one run); each attempt is reported as a process\n", d.Name())
		return nil, nil
	}
	self, _ := event.SelfIdentity()
	run, err := d.Prepare(ctx, agent.Launch{
		Argv: slices.Clone(cfg.Argv), ChildID: cfg.ChildID, RootChildID: cmp.Or(cfg.Lineage.RootChildID, cfg.ChildID), Wrapper: &self,
	})
	if err != nil {
		fmt.Fprintf(std.err, "lcwrap: %v; reporting the process only\n", err)
		return nil, nil
	}
	c := run.Command()
	for _, w := range c.Warnings {
		fmt.Fprintf(std.err, "lcwrap: %s\n", oneLine(w))
	}
	switch {
	case c.Recorded != nil:
		cfg.RecordedArgv = c.Recorded
	case !slices.Equal(cfg.Argv, c.Argv):
		cfg.RecordedArgv = cfg.Argv // what the user asked for; details.agent says what was added
	}
	cfg.Argv = c.Argv
	cfg.ExtraEnv = append(cfg.ExtraEnv, c.Env...)
	if s, ok := run.(agent.Starter); ok {
		cfg.OnStarted = s.Started
	}
	event.SetPtr(&cfg.CreatedExtra, agent.KeyAgent, c.Added)
	ar := &agentRun{run: run, tapTo: run.Stdout()}
	cfg.BeforeTerminal = ar.beforeTerminal
	return ar, nil
}

// stdout wraps the writer the child's stdout is passed to, so that the
// integration sees every byte passed through (nil: no tap needed).
func (ar *agentRun) stdout(w io.Writer) io.Writer {
	if ar == nil || ar.tapTo == nil {
		return w
	}
	if ar.tap == nil {
		ar.tap = newTapQueue(ar.tapTo)
	}
	return tapWriter{w: w, q: ar.tap}
}

// attach gives the integration the run's emitter (its sinks) under the
// agent's own source.
func (ar *agentRun) attach(e *emit.Emitter) {
	if ar != nil {
		ar.run.Attach(e)
	}
}

// beforeTerminal ends the agent's evidence and children before the
// process's own terminal event, and adds what the agent reported.
func (ar *agentRun) beforeTerminal(term *event.Terminal) {
	var untapped int64
	if ar.tap != nil {
		untapped, _ = ar.tap.Close() // the streams are drained: every byte is in
	}
	ar.close()
	ar.run.Report(term)
	if untapped > 0 {
		event.SetPtr(&term.Extra, agent.KeyAgentOutputUnread, &agent.AgentOutputUnread{Bytes: untapped, Reason: "the agent's output came faster than it could be read; it passed through unchanged"})
	}
}

// close stops the integration's evidence (once); finish calls it too, for
// a run that never reached its terminal event's seam.
func (ar *agentRun) close() {
	ar.closeOnce.Do(ar.run.Close)
}

// finish is called once supervise.Run has returned.
func (ar *agentRun) finish() {
	if ar == nil {
		return
	}
	if ar.tap != nil {
		ar.tap.Close()
	}
	ar.close()
}

// tapWriter passes bytes to w and then queues what w took for tap, which
// a goroutine of its own feeds: the stream writes under its own lock, and
// what tap does (events, possibly to this very stream) must never wait
// for it, nor slow it. Past maxTapQueue bytes waiting, bytes are not
// queued but counted (tap then sees a gap, never a changed stream).
type tapWriter struct {
	w io.Writer
	q *emit.Queue[[]byte]
}

const maxTapQueue = 8 << 20

func newTapQueue(tap io.Writer) *emit.Queue[[]byte] {
	return emit.NewQueue(maxTapQueue, func(b []byte) int { return len(b) }, true, func(batch [][]byte) error {
		for _, b := range batch {
			tap.Write(b)
		}
		return nil
	})
}

func (t tapWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if n > 0 {
		t.q.Put(append([]byte(nil), p[:n]...))
	}
	return n, err
}
