package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// Hooks is a Driver whose agent calls lcwrap back as a command, one
// payload on its stdin (`lcwrap hook NAME`), from a hook the user
// installed or one lcwrap added to a run it launched.
type Hooks interface {
	// HookSettings is what to merge into the agent's settings to install
	// lcwrap's hook; exe is lcwrap's absolute path.
	HookSettings(exe string) string
	// Hook records the one payload on in, as call says, and returns what
	// it could not do: lines for lcwrap's stderr. It never fails, and
	// never holds up, the agent that called it.
	Hook(in io.Reader, call HookCall) []string
}

// HookCall says how one hook call is recorded.
type HookCall struct {
	// Relay hands the payload to the lcwrap that launched the agent.
	Relay bool
	// Journal gives the journal's path, when the payload is recorded
	// there (it is asked only then).
	Journal func() (string, error)
	// Wait bounds every wait of the call (a lock, the relay).
	Wait time.Duration
	// Parent and Root are the lineage of an enclosing lcwrap run, when
	// there is one: the parent and root of the sessions.
	Parent, Root string
	// Event names the hook event, for an agent whose payloads do not
	// (GitHub Copilot CLI's); "" otherwise.
	Event string
}

// Record records one normalised payload in the journal the call names,
// through a HookAppend of source, prefix and limits: how a hook call that
// no launching lcwrap owns ends. It returns the warnings to print; a
// journal it cannot locate is one.
func (c HookCall) Record(source, prefix, limits string, out Outcome) []string {
	path, err := c.Journal()
	if err != nil {
		return []string{fmt.Sprintf("cannot tell where the journal is; not recorded: %v", err)}
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return HookAppend{
		Source: source, Prefix: prefix, Limits: limits,
		Journal: path, Wait: c.Wait,
		Parent: c.Parent, Root: c.Root,
	}.Record(out)
}
