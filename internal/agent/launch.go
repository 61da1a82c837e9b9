package agent

import (
	"context"
	"io"
	"path/filepath"

	"github.com/lcwrap/lcwrap/internal/event"
)

// Agent selections of the command line (--agent).
const (
	SelectAuto = "auto" // recognise the agent by the command's base name
	SelectNone = "none" // no agent integration at all
)

// Launch is a run lcwrap is about to start, as an agent integration sees
// it. The caller fills the first block; Driver.Prepare the second.
type Launch struct {
	// Argv is the command. Prepare may change it; Added then says how.
	Argv []string
	// ChildID and RootChildID identify the launched process's lifecycle:
	// the parent and root of the agent's sessions.
	ChildID, RootChildID string
	// Tracker records the agent's observations (source: Driver.Name()).
	Tracker *Tracker

	// Recorded, when not nil, is the command as the created event records
	// it (the agent's prompt elided, say); Argv as given otherwise.
	Recorded []string
	// Env is added to the child's environment (KEY=VALUE).
	Env []string
	// Added says which integration ran and what Prepare added to the
	// command line; it is the created event's agent member (nil: the
	// integration does nothing this run).
	Added *AgentLaunch
	// Warnings are lines for lcwrap's stderr (without the "lcwrap: ").
	Warnings []string
	// Stdout, when not nil, is given every byte of the child's stdout as
	// it is passed through, unchanged; it must not block, and its errors
	// are ignored.
	Stdout io.Writer
	// Started, when not nil, is called once the process has started,
	// with its identity, after its starting event; it must return
	// promptly.
	Started func(child event.Identity)
	// Close, when not nil, is called once the process has ended and its
	// output is drained, before the agent's children are ended: no
	// evidence arrives after it returns.
	Close func()
	// Report, when not nil, adds to the process's terminal event: the
	// agent's own report on the run in AgentReport, attributed to it
	// (ReportedBy, Via), never as lcwrap's claim; lcwrap's own findings
	// about the integration in members of their own.
	Report func(terminal *event.Terminal)
}

// Driver is one agent integration for runs lcwrap launches.
type Driver interface {
	// Name is the --agent value and the source of the agent's events
	// ("claude-code", "codex").
	Name() string
	// Recognize reports whether argv runs this agent.
	Recognize(argv []string) bool
	// Prepare sets up the evidence for one run. An error means no
	// integration for this run (the caller warns and runs the command as
	// it was); Prepare must then leave l.Argv unchanged.
	Prepare(ctx context.Context, l *Launch) error
}

// BaseName is the command's base name, for Recognize.
func BaseName(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return filepath.Base(argv[0])
}

// Select picks the driver for argv: by name (--agent NAME), by
// recognition (SelectAuto or ""), or none (SelectNone). It returns nil
// when none applies, and ok=false when name is not a driver's.
func Select(name string, argv []string, drivers ...Driver) (d Driver, ok bool) {
	switch name {
	case SelectNone:
		return nil, true
	case SelectAuto, "":
		for _, d := range drivers {
			if d.Recognize(argv) {
				return d, true
			}
		}
		return nil, true
	}
	for _, d := range drivers {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}
