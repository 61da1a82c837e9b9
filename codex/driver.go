package codex

import (
	"context"
	"strings"

	"github.com/lcwrap/lcwrap/agent"
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

// valueFlags are codex's options that take a value as the next argument.
var valueFlags = map[string]bool{
	"-c": true, "--config": true, "--enable": true, "--disable": true, "--remote": true,
	"--remote-auth-token-env": true, "-i": true, "--image": true, "-m": true, "--model": true,
	"--local-provider": true, "-p": true, "--profile": true, "-s": true, "--sandbox": true,
	"-C": true, "--cd": true, "-a": true, "--ask-for-approval": true, "--add-dir": true,
	"--output-schema": true, "-o": true, "--output-last-message": true, "--color": true,
}

// subcommands are codex's subcommands that run no session of the TUI.
var subcommands = map[string]bool{
	"agents": true, "review": true, "login": true, "logout": true, "mcp": true, "plugin": true,
	"app-server": true, "remote-control": true, "completion": true, "update": true, "doctor": true,
	"sandbox": true, "debug": true, "apply": true, "a": true, "queue": true, "archive": true,
	"delete": true, "migrate-rollouts": true, "migrate-nfs-db": true, "unarchive": true,
	"cloud": true, "exec-server": true, "features": true, "help": true, "mcp-server": true,
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
		case valueFlags[a]:
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
		case subcommands[a]:
			return ModeNone
		default:
			return ModeInteractive // the first positional is the prompt
		}
	}
	return ModeInteractive
}

// Driver is the codex integration for runs lcwrap launches (agent.Driver).
type Driver struct{}

// Name is the --agent value and the source of the session events.
func (Driver) Name() string { return "codex" }

// Recognize reports whether argv runs codex (by its base name).
func (Driver) Recognize(argv []string) bool {
	b := agent.BaseName(argv)
	return b == "codex" || b == "codex.js"
}

// Limits says what this source can never know (recorded in every
// session's created event).
const Limits = "codex's own events: what codex reported, nothing more; no heartbeat, no cancel authority, and codex reports no end of a session (it ends when its process does)"

// Prepare sets up the evidence for one run; it never changes the command.
// exec --json: every line codex prints on stdout is read as it passes
// through. Interactive: the rollout is followed once proven (Rollout).
func (Driver) Prepare(ctx context.Context, l *agent.Launch) error {
	switch Classify(l.Argv) {
	case ModeExec:
		tap := &execTap{tracker: l.Tracker}
		tap.lines = NewLines(tap.line)
		l.Stdout = tap
		l.Close = tap.close
	case ModeInteractive:
		// Needs the launched process's identity: see Follower.
	}
	return nil
}

// execTap feeds the lines of codex's stdout to a Tracker.
type execTap struct {
	tracker *agent.Tracker
	reader  ExecReader
	lines   *Lines
}

func (t *execTap) Write(p []byte) (int, error) { return t.lines.Write(p) }

func (t *execTap) line(b []byte) { t.tracker.Apply(t.reader.Line(b)) }

// close counts what could not be read as a whole line.
func (t *execTap) close() {
	if t.lines.Partial() {
		t.tracker.Apply(agent.Unrecognize(t.reader.Session(), "(unterminated last line)"))
	}
	for range t.lines.Oversized {
		t.tracker.Apply(agent.Unrecognize(t.reader.Session(), "(line over 1 MiB)"))
	}
}
