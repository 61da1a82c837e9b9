package agent

import (
	"cmp"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Driver is one agent integration: how lcwrap sees an agent's sessions in
// a run it launches (Prepare) and in one it did not start (Adopt).
type Driver interface {
	// Name is the --agent value and the source of the agent's events
	// ("claude-code", "codex").
	Name() string
	// Recognize reports whether argv runs this agent.
	Recognize(argv []string) bool
	// Prepare sets up the evidence for one run lcwrap is about to start.
	// Its outcomes: the Run (one that contributes nothing is fine); or an
	// error, meaning no integration for this run (the caller warns and
	// runs the command as it was), with nothing left behind.
	Prepare(ctx context.Context, l Launch) (Run, error)
	// Adopt starts following the agent's own evidence about something
	// lcwrap did not start (see AdoptRequest for the shapes).
	Adopt(ctx context.Context, req AdoptRequest) (Adoption, error)
}

// Launch is a run lcwrap is about to start, as Driver.Prepare is given it.
type Launch struct {
	// Argv is the command as the user gave it.
	Argv []string
	// ChildID and RootChildID identify the launched process's lifecycle:
	// the parent and root of the agent's sessions.
	ChildID, RootChildID string
	// Wrapper is the lcwrap process that owns the run's events, recorded
	// in every session's created event (nil: not recorded).
	Wrapper *event.Identity
}

// Command is what an integration makes of the command before it starts.
type Command struct {
	// Argv is the command to start: the launch's, or changed by the
	// integration (Added then says how).
	Argv []string
	// Recorded, when not nil, is the command as the created event records
	// it (the agent's prompt elided, say); else the launch's Argv.
	Recorded []string
	// Env is added to the child's environment (KEY=VALUE).
	Env []string
	// Added says which integration ran and what it added to the command
	// line; it is the created event's agent member (nil: nothing added).
	Added *AgentLaunch
	// Warnings are lines for lcwrap's stderr (without the "lcwrap: ").
	Warnings []string
}

// Run is one launched run as its integration sees it. The caller calls
// Command and Stdout before the start, Attach before the start, Close
// once when the process has ended and its output is drained, and Report
// at most once after Close. A Run that needs the started process's
// identity also implements Starter.
type Run interface {
	// Command is what the integration makes of the command.
	Command() Command
	// Stdout, when not nil, is given every byte of the child's stdout as
	// it is passed through, unchanged; it must not block, and its errors
	// are ignored. nil: the integration does not read stdout.
	Stdout() io.Writer
	// Attach gives the run the emitter of the run's events (lcwrap's
	// source): the integration writes its agent's events there under
	// its own source.
	Attach(e *emit.Emitter)
	// Close ends the integration's evidence: no evidence arrives after it
	// returns.
	Close()
	// Report ends the agent's children still open (lost: the process
	// ended) and adds to the process's terminal event what they were
	// (AgentSessions), the agent's own report on the run in AgentReport,
	// attributed to it (ReportedBy, Via), never as lcwrap's claim, and
	// lcwrap's own findings about the integration in members of their own.
	Report(terminal *event.Terminal)
}

// Starter is a Run that needs the launched process's identity: Started is
// called once the process has started, after its starting event, and
// must return promptly. (Reading the identity costs a look at /proc; a
// run that does not implement Starter spares it.)
type Starter interface {
	Started(child event.Identity)
}

// Base is what every Run shares: the command, and the Tracker of the
// run's sessions, attached to the run's emitter and ended with the
// process. By itself it is a Run that reads nothing; a driver's run embeds
// it and overrides the methods it needs. An overriding Report must call
// Base.Report, which ends the sessions.
type Base struct {
	// Cmd is what Command returns (Argv: the launch's, until changed).
	Cmd Command
	// Tracker records the agent's observations for this run.
	Tracker *Tracker

	childID, source string
}

// Base returns the Base of a run of this launch whose sessions have source
// (the driver's name), child ids starting with prefix, and limits (what
// this source can never say) in every created event.
func (l Launch) Base(source, prefix, limits string) Base {
	return Base{
		Cmd:     Command{Argv: slices.Clone(l.Argv)},
		childID: l.ChildID,
		source:  source,
		Tracker: New(Config{
			Source: source, Prefix: prefix, Limits: limits,
			Parent: l.ChildID, Root: cmp.Or(l.RootChildID, l.ChildID),
			RunTag: RunTag(l.ChildID), Wrapper: l.Wrapper,
		}),
	}
}

// Command implements Run.
func (b *Base) Command() Command { return b.Cmd }

// Stdout implements Run: nothing is read.
func (b *Base) Stdout() io.Writer { return nil }

// Attach implements Run.
func (b *Base) Attach(e *emit.Emitter) { b.Tracker.SetEmitter(e.WithSource(b.source)) }

// Close implements Run: there is nothing to stop.
func (b *Base) Close() {}

// Report implements Run: the sessions still open end lost, and the
// terminal event says which sessions there were.
func (b *Base) Report(term *event.Terminal) {
	event.SetPtr(&term.Extra, KeyAgentSessions, b.Tracker.End(ProcessEnd{ChildID: b.childID, Exit: term.Exit}))
}

// RunTag makes an agent's child ids unique to one run of lcwrap: the
// random tail of a generated child id (childID's), else a fresh one.
func RunTag(childID string) string {
	if i := strings.LastIndexByte(childID, '-'); i >= 0 && len(childID)-i-1 == 8 {
		return childID[i+1:]
	}
	id := emit.NewChildID("x")
	return id[strings.LastIndexByte(id, '-')+1:]
}

// BaseName is the command's base name, for Recognize.
func BaseName(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return filepath.Base(argv[0])
}
