package codex

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Mode is how a codex command line publishes its evidence.
type Mode int

// The modes of Classify.
const (
	// ModeNone: a codex subcommand without session evidence lcwrap reads
	// (login, mcp, app-server, exec without --json, ...).
	ModeNone Mode = iota
	// ModeExec: `codex exec --json`: its stdout is the event stream.
	ModeExec
	// ModeInteractive: the TUI (no subcommand, resume, fork): its rollout
	// file, once proven to be this process's.
	ModeInteractive
)

func (m Mode) String() string {
	switch m {
	case ModeExec:
		return "exec-json"
	case ModeInteractive:
		return "interactive"
	}
	return "none"
}

// valueFlag reports whether a is one of codex's options that take a value
// as the next argument. (Switches, not maps: no cost at lcwrap's start.)
func valueFlag(a string) bool {
	switch a {
	case "-c", "--config", "--enable", "--disable", "--remote", "--remote-auth-token-env", "-i", "--image",
		"-m", "--model", "--local-provider", "-p", "--profile", "-s", "--sandbox", "-C", "--cd",
		"-a", "--ask-for-approval", "--add-dir", "--output-schema", "-o", "--output-last-message", "--color":
		return true
	}
	return false
}

// subcommand reports whether a is a codex subcommand that runs no
// session of the TUI.
func subcommand(a string) bool {
	switch a {
	case "agents", "review", "login", "logout", "mcp", "plugin", "app-server", "remote-control", "completion",
		"update", "doctor", "sandbox", "debug", "apply", "a", "queue", "archive", "delete", "migrate-rollouts",
		"migrate-nfs-db", "unarchive", "cloud", "exec-server", "features", "help", "mcp-server":
		return true
	}
	return false
}

// Classify says how argv (a codex command line, argv[0] the program)
// publishes its evidence: exec --json, the interactive TUI, or neither.
func Classify(argv []string) Mode {
	args := argv[min(1, len(argv)):]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ModeInteractive // what follows is the prompt
		case valueFlag(a):
			i++
		case strings.HasPrefix(a, "-"):
			if a == "--help" || a == "-h" || a == "--version" || a == "-V" {
				return ModeNone
			}
		case a == "exec" || a == "e":
			for _, b := range args[i+1:] {
				if b == "--" {
					break
				}
				if b == "--json" || b == "--experimental-json" {
					return ModeExec
				}
				if b == "--help" || b == "-h" {
					return ModeNone
				}
			}
			return ModeNone
		case a == "resume" || a == "fork":
			return ModeInteractive
		case subcommand(a):
			return ModeNone
		default:
			return ModeInteractive // the first positional is the prompt
		}
	}
	return ModeInteractive
}

// ProcessMode classifies a running process's command line (read from
// /proc): the codex binary itself, or node running codex's launcher.
// Anything else is ModeNone.
func ProcessMode(argv []string) Mode {
	if !(Driver{}).Recognize(argv) {
		return ModeNone
	}
	return Classify(withoutNode(argv))
}

// withoutNode drops a leading `node` from `node …/codex ARGS`.
func withoutNode(argv []string) []string {
	if len(argv) >= 2 && (filepath.Base(argv[0]) == "node" || filepath.Base(argv[0]) == "nodejs") {
		return argv[1:]
	}
	return argv
}

// Driver is the codex integration for runs lcwrap launches (agent.Driver).
type Driver struct {
	// Exe is lcwrap's absolute path, for the hooks codex runs (they call
	// lcwrap back); empty: no hooks are registered.
	Exe string
}

// Source is the source of codex's session events, and the --agent value.
const Source = "codex"

// Name is the --agent value and the source of the session events.
func (Driver) Name() string { return Source }

// Recognize reports whether argv runs codex: by its base name, also as
// `node …/codex`.
func (Driver) Recognize(argv []string) bool {
	b := agent.BaseName(withoutNode(argv))
	return b == "codex" || b == "codex.js"
}

// Limits says what this source can never know (recorded in every
// session's created event).
const Limits = "codex's own events: what codex reported, nothing more; no heartbeat, no cancel authority, no prompt or message text, and codex reports no end of a session (it ends when its process does)"

// ChildPrefix starts the child id of every codex session.
const ChildPrefix = "cx"

// Prepare implements agent.Driver. exec --json: every line codex prints
// on stdout is read as it passes through. Interactive: the rollout is
// followed once proven (Follower), from the moment the process has
// started. For both, when the command is codex itself, lcwrap registers
// its hooks for this run (config overrides, -c: nothing is written),
// which codex runs once the user has trusted them.
func (d Driver) Prepare(_ context.Context, l agent.Launch) (agent.Run, error) {
	b := l.Base(Source, ChildPrefix, Limits)
	g := newGate(b.Tracker)
	switch Classify(withoutNode(l.Argv)) {
	case ModeExec:
		tap := &execTap{apply: g.Apply}
		tap.lines = NewLines(tap.line)
		r := &execJSONRun{Base: b, tap: tap}
		r.hooks = d.addHooks(&r.Cmd, l.Argv, g.Apply, false, "through codex's exec stream only")
		return r, nil
	case ModeInteractive:
		f := NewFollower(b.Tracker)
		f.apply = g.Apply
		r := &ttyRun{Base: b, f: f}
		r.hooks = d.addHooks(&r.Cmd, l.Argv, g.Apply, true, "through its rollout only, once that is proven to be this run's")
		return r, nil
	}
	return &b, nil
}

// addHooks registers in c lcwrap's hooks that codex will run for argv —
// those the user has trusted (all, when the command itself passes
// --dangerously-bypass-hook-trust) — and starts the server their payloads
// reach. An untrusted hook is not registered: codex would not run it, and
// its TUI would open a "hooks need review" dialog before every session.
// It returns nil when there is nothing to say (no lcwrap path, a command
// that is not codex itself, or one that sets hooks itself); what the
// user should know is in c's warnings.
func (d Driver) addHooks(c *agent.Command, argv []string, apply func(agent.Outcome) error, turnsWait bool, fallback string) *hookSide {
	if d.Exe == "" || !d.Recognize(argv) {
		return nil
	}
	at := 1
	if len(withoutNode(argv)) < len(argv) {
		at = 2 // node …/codex.js: after the script
	}
	bypass, own := hookFlags(argv[at:])
	if own != "" {
		c.Warnings = append(c.Warnings, "the command sets codex hooks itself ("+oneLine(own)+"), so lcwrap adds none of its own this run (they would replace each other); lcwrap sees this run "+fallback)
		return nil
	}
	home := CodexHome()
	var untrusted []HookEvent
	if !bypass {
		untrusted = Untrusted(home, d.Exe)
	}
	var register []HookEvent
	for _, ev := range HookEvents {
		if !slices.Contains(untrusted, ev) {
			register = append(register, ev)
		}
	}
	if len(untrusted) > 0 {
		c.Warnings = append(c.Warnings, hookWarning(d.Exe, home, untrusted, fallback))
	}
	report := CodexHooks{Command: HookCommand(d.Exe), Registered: labels(register), NotTrusted: labels(untrusted), BypassTrust: bypass}
	if len(register) == 0 {
		return &hookSide{report: report}
	}
	h, env, err := startHooks(apply, turnsWait)
	if err != nil {
		c.Warnings = append(c.Warnings, err.Error()+"; lcwrap sees this run "+fallback)
		return nil
	}
	h.report = report
	args := HookArgs(d.Exe, register)
	c.Argv = slices.Concat(argv[:at], args, argv[at:])
	c.Env = append(c.Env, env...)
	how := "trusted in " + home + "/config.toml"
	switch {
	case bypass:
		how = "the command passes --dangerously-bypass-hook-trust itself"
	case len(untrusted) > 0:
		how += fmt.Sprintf("; %d more not trusted, so not registered", len(untrusted))
	}
	c.Added = &agent.AgentLaunch{Agent: Source, AddedArgs: args, AddedAt: int64(at), Evidence: []string{
		fmt.Sprintf("hooks: %d events as config overrides for this run (-c), each running %s, which hands its payload to %s (token in $%s); %s",
			len(register), HookCommand(d.Exe), h.url(), EnvHookToken, how),
	}}
	return h
}

// execJSONRun is a launched `codex exec --json`: its stdout is read.
type execJSONRun struct {
	agent.Base
	tap   *execTap
	hooks *hookSide // nil: none registered
}

// Stdout implements agent.Run.
func (r *execJSONRun) Stdout() io.Writer { return r.tap }

// Close implements agent.Run.
func (r *execJSONRun) Close() {
	if r.hooks != nil {
		r.hooks.close()
	}
	r.tap.close()
}

// Report implements agent.Run.
func (r *execJSONRun) Report(term *event.Terminal) {
	r.Base.Report(term)
	r.tap.report(term)
	if r.hooks != nil {
		r.hooks.terminal(term)
	}
}

// ttyRun is a launched interactive codex (the TUI): its rollout, once
// proven to be that process's, is followed.
type ttyRun struct {
	agent.Base
	f     *Follower
	hooks *hookSide // nil: none registered
}

// Started implements agent.Starter: proving starts from the process.
func (r *ttyRun) Started(child event.Identity) { r.f.Start(child) }

// Close implements agent.Run.
func (r *ttyRun) Close() {
	if r.hooks != nil {
		r.hooks.close()
	}
	r.f.Stop()
}

// Report implements agent.Run.
func (r *ttyRun) Report(term *event.Terminal) {
	r.Base.Report(term)
	rep := r.f.Report()
	event.SetPtr(&term.Extra, KeyCodexRollout, &rep)
	if r.hooks != nil {
		r.hooks.terminal(term)
	}
}

// ownLine starts every event line lcwrap writes.
var ownLine = []byte(`{"schemaVersion":`)

// execTap feeds the lines of codex's stdout to a Tracker.
type execTap struct {
	apply  func(agent.Outcome) error
	reader ExecReader
	lines  *Lines

	mu    sync.Mutex
	turns int               // turn.completed and turn.failed seen
	usage agent.NamedCounts // the last turn's usage, as codex reported it
}

func (t *execTap) Write(p []byte) (int, error) { return t.lines.Write(p) }

func (t *execTap) line(b []byte) {
	if bytes.HasPrefix(b, ownLine) {
		// lcwrap's own event line: with --emit stdout the events share
		// the stream that is tapped; codex never prints one.
		return
	}
	out := t.reader.Line(b)
	for _, o := range out.Observations {
		if o.Native == "turn.completed" || o.Native == "turn.failed" {
			t.mu.Lock()
			t.turns++
			if o.Facts.Usage != nil {
				t.usage = o.Facts.Usage
			}
			t.mu.Unlock()
		}
	}
	t.apply(out)
}

// close counts what could not be read as a whole line.
func (t *execTap) close() {
	if t.lines.Partial() {
		t.apply(agent.Unrecognize(t.reader.Session(), "(unterminated last line)"))
	}
	for range t.lines.Oversized {
		t.apply(agent.Unrecognize(t.reader.Session(), "(line over 1 MiB)"))
	}
}

// report is codex's own account of the run, attributed to it.
func (t *execTap) report(term *event.Terminal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.turns == 0 {
		return
	}
	turns := int64(t.turns)
	r := &agent.AgentReport{ReportedBy: Source, Via: "exec-json", NumTurns: &turns, SessionID: t.reader.Session()}
	if t.usage != nil {
		u := &agent.AgentUsage{}
		for k, dst := range map[string]**int64{"input": &u.Input, "cacheRead": &u.CacheRead, "cacheCreation": &u.CacheCreation, "output": &u.Output} {
			if n, ok := t.usage.Get(k); ok {
				*dst = &n
			}
		}
		r.Usage = u
	}
	event.SetPtr(&term.Extra, agent.KeyAgentReport, r)
}

var _ agent.Driver = Driver{}
