package agent

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Shape is what an adoption follows.
type Shape string

// The shapes of adoption. A driver follows those its agent's evidence
// allows and says ErrNotSupported for the others.
const (
	// ShapePID: one running process, named by its pid: the session it
	// runs, once the agent's own files prove which one that is.
	ShapePID Shape = "pid"
	// ShapeRegistry: every session the agent's own registry lists, as
	// they come and go, with no process named.
	ShapeRegistry Shape = "registry"
	// ShapeServer: a running agent server's event stream, and the
	// sessions it reports.
	ShapeServer Shape = "server"
)

// String says what the shape follows, for messages.
func (s Shape) String() string {
	switch s {
	case ShapePID:
		return "a process by its pid"
	case ShapeRegistry:
		return "every session the agent's registry lists"
	case ShapeServer:
		return "a running server's event stream"
	}
	return string(s)
}

// Target is what to adopt: a PIDTarget, a RegistryTarget or a
// ServerTarget.
type Target interface {
	Shape() Shape
}

// PIDTarget is one running process lcwrap has adopted and recorded (its
// presence is lcwrap's own child); the driver follows the session that
// process runs.
type PIDTarget struct {
	// Identity is the process's pid and start time.
	Identity event.Identity
	// Name is its short name: its command's base name, else the kernel's.
	Name string
	// Argv is its command line (nil: it could not be read).
	Argv []string
	// Named says the user named this agent (--agent NAME): the driver
	// looks for its evidence even where Name does not say it is the
	// agent (a driver whose proof needs the command line still needs it).
	Named bool
	// Child is the adopted process's lifecycle: the parent of its
	// sessions.
	Child *emit.Child
}

// RegistryTarget is every session the agent's own registry lists, as
// they come and go (Claude Code's `claude agents`).
type RegistryTarget struct {
	// Lineage gives every session its parent and root (an enclosing
	// lcwrap's; empty: none).
	Lineage event.Lineage
}

// ServerTarget is a running agent server's event stream (opencode's
// `/event`).
type ServerTarget struct {
	// URL is the server's address as the user gave it.
	URL string
	// Lineage gives every session its parent and root (an enclosing
	// lcwrap's; empty: none).
	Lineage event.Lineage
}

// Shape implements Target.
func (PIDTarget) Shape() Shape { return ShapePID }

// Shape implements Target.
func (RegistryTarget) Shape() Shape { return ShapeRegistry }

// Shape implements Target.
func (ServerTarget) Shape() Shape { return ShapeServer }

// Tracker returns a Tracker for the sessions of the adopted process:
// external sessions under its child, written to e under source.
func (t PIDTarget) Tracker(e *emit.Emitter, source, prefix, limits string) *Tracker {
	id := t.Child.ID()
	return New(Config{
		Source: source, Prefix: prefix, Limits: limits,
		Emitter: e.WithSource(source), Parent: id, Root: cmp.Or(t.Child.Lineage().RootChildID, id),
		External: true, RunTag: RunTag(id),
	})
}

// AdoptRequest asks a driver to follow an agent lcwrap did not start.
type AdoptRequest struct {
	// Target is what to follow.
	Target Target
	// Emitter writes the events (lcwrap's source): the driver writes its
	// agent's under its own (Emitter.WithSource).
	Emitter *emit.Emitter
	// Journal is the journal's path ("": none known): hooks a user
	// installed keep their sessions' state beside it.
	Journal string
	// Say, when not nil, takes a line for the person at lcwrap's terminal
	// (without "lcwrap: "); nil: nothing is said.
	Say func(line string)
}

// Sayf says one line through Say, if there is one.
func (r AdoptRequest) Sayf(format string, args ...any) {
	if r.Say != nil {
		r.Say(fmt.Sprintf(format, args...))
	}
}

// Adoption is an agent lcwrap did not start, being followed.
type Adoption interface {
	// Done is closed when what is followed has ended on its own (a
	// server's stream closed); nil for a PIDTarget, whose end the caller
	// watches (the adopted process's).
	Done() <-chan struct{}
	// End stops following, once, and returns when no evidence arrives any
	// more. gone says what was followed has ended (the process exited,
	// the server is gone): the agent's children still open then end lost,
	// once. Otherwise observation stopped, and they are left as they are:
	// their state is unknown, never guessed.
	End(gone bool)
}

// The outcomes of Driver.Adopt besides an Adoption. Nothing is written
// with any of them.
var (
	// ErrNotAgent: the target is not this driver's agent (a process that
	// runs another program). Nothing is said.
	ErrNotAgent = errors.New("not this agent's")
	// ErrNotSupported: the driver does not follow this shape of adoption
	// (an *UnsupportedError says which).
	ErrNotSupported = errors.New("not supported by this driver")
)

// UnsupportedError is a driver's answer to a shape of adoption it does
// not follow; it wraps ErrNotSupported. Any other error from Adopt means
// the target is the agent's but none of its evidence can be followed, and
// says why.
type UnsupportedError struct {
	Agent string
	Shape Shape
}

// NotSupported returns the driver's error for a target it does not follow.
func NotSupported(agent string, t Target) error {
	return &UnsupportedError{Agent: agent, Shape: t.Shape()}
}

func (e *UnsupportedError) Error() string {
	return e.Agent + ": adopting " + e.Shape.String() + " is " + ErrNotSupported.Error()
}

func (e *UnsupportedError) Unwrap() error { return ErrNotSupported }
