package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/agent/codex"
	"github.com/lcwrap/lcwrap/internal/agent/copilot"
	"github.com/lcwrap/lcwrap/internal/agent/gemini"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

// hookWait bounds every wait of a hook call (the session's state lock,
// the journal's lock, the relay): a hook never holds its agent up long.
const hookWait = 500 * time.Millisecond

func hookCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "record an agent's hook payload (Claude Code: lcwrap hook claude-code; Codex: lcwrap hook codex)",
		Description: "Each agent whose hooks lcwrap records is a command of its own: its help says\n" +
			"what a call records and how to install it.",
		Action: func(_ context.Context, cmd *cli.Command) error {
			msg := "name the agent: 'lcwrap hook claude-code'"
			if a := cmd.Args().First(); a != "" {
				msg = fmt.Sprintf("lcwrap hook records no agent %q; name one: 'lcwrap hook claude-code'", a)
			}
			return usagef(cmd, "%s", msg)
		},
		Commands: []*cli.Command{claudeCodeHookCommand(std), geminiHookCommand(std), copilotHookCommand(std), codexHookCommand(std)},
	}
}

func claudeCodeHookCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  claudecode.Source,
		Usage: "record one Claude Code hook payload",
		Description: "Reads one hook payload on stdin and records what it shows about the agent's\n" +
			"session and sub-agents. It prints nothing on stdout and always exits 0:\n" +
			"what it could not record is one line on stderr. Installed by you\n" +
			"(--print-settings prints the settings to merge into ~/.claude/settings.json),\n" +
			"it appends to the journal, keeping each session's state beside it. Under\n" +
			"'lcwrap -- claude', lcwrap registers its own hooks and owns the events; a\n" +
			"hook you installed then records nothing, so nothing is recorded twice.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "journal", Usage: "journal `PATH` (default $LCWRAP_JOURNAL, else the default journal)"},
			&cli.DurationFlag{Name: "lock-timeout", Value: hookWait, Usage: "give up waiting for a lock after this long (the events are kept for the next call)"},
			&cli.BoolFlag{Name: "print-settings", Usage: "print the hooks to merge into ~/.claude/settings.json, and exit"},
			&cli.BoolFlag{Name: "relay", Usage: "hand the payload to the lcwrap that launched the agent ($" + claudecode.EnvHookURL + "); lcwrap adds this itself"},
		},
		Action: hookAction(std, claudecode.Source, "print-settings", journalCall),
	}
}

func codexHookCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  codex.Source,
		Usage: "hand one Codex hook payload to the lcwrap that launched codex",
		Description: "'lcwrap -- codex' registers its hooks for that run only (config overrides, -c;\n" +
			"nothing is written), each running 'lcwrap hook codex --relay', which reads one\n" +
			"payload on stdin and hands it to that lcwrap. It prints nothing on stdout and\n" +
			"always exits 0: what it could not do is one line on stderr. Codex runs a hook\n" +
			"only once you have trusted it, so lcwrap registers only the hooks you trusted:\n" +
			"review what --print-config prints and add it to $CODEX_HOME/config.toml\n" +
			"(default ~/.codex/config.toml).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "print-config", Usage: "print the trust entries for lcwrap's hooks, for codex's config.toml, and exit"},
			&cli.BoolFlag{Name: "relay", Usage: "hand the payload to the lcwrap that launched codex ($" + codex.EnvHookURL + "); lcwrap adds this itself"},
		},
		Action: hookAction(std, codex.Source, "print-config", func(cmd *cli.Command) agent.HookCall {
			return agent.HookCall{Relay: cmd.Bool("relay"), Wait: hookWait}
		}),
	}
}

// hookHelp is the hook command's entry in helps.
func hookHelp() helpText {
	return helpText{
		examples: []example{
			{"lcwrap hook claude-code --print-settings", "the hooks to merge into ~/.claude/settings.json"},
			{"lcwrap help hook claude-code", "what a Claude Code hook call records"},
		},
	}
}

// codexHookHelp is the entry of lcwrap hook codex in helps.
func codexHookHelp() helpText {
	return helpText{
		examples: []example{
			{"lcwrap hook codex --print-config", "the trust entries for lcwrap's hooks, for codex's config.toml"},
			{"lcwrap hook codex --relay < payload.json", "hand one payload to the launching lcwrap (what codex runs)"},
		},
	}
}

// claudeCodeHookHelp is the entry of lcwrap hook claude-code in helps.
func claudeCodeHookHelp() helpText {
	return helpText{
		examples: []example{
			{"lcwrap hook claude-code --print-settings", "the hooks to merge into ~/.claude/settings.json"},
			{"lcwrap hook claude-code < payload.json", "record one payload (what Claude Code does)"},
		},
	}
}

func geminiHookCommand(std stdio) *cli.Command {
	return agentHookCommand(std, gemini.Source, "Gemini CLI", "merge into ~/.gemini/settings.json", false)
}

func copilotHookCommand(std stdio) *cli.Command {
	return agentHookCommand(std, copilot.Source, "GitHub Copilot CLI", "save as a file in ~/.copilot/hooks/", true)
}

// agentHookCommand is `lcwrap hook NAME` for an agent whose hooks call
// lcwrap as a command (withEvent: its payloads do not name their event,
// the hook's --event does).
func agentHookCommand(std stdio, source, label, install string, withEvent bool) *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "journal", Usage: "journal `PATH` (default $LCWRAP_JOURNAL, else the default journal)"},
		&cli.DurationFlag{Name: "lock-timeout", Value: hookWait, Usage: "give up waiting for a lock after this long (the events are kept for the next call)"},
		&cli.BoolFlag{Name: "print-settings", Usage: "print the hooks to " + install + ", and exit"},
		&cli.BoolFlag{Name: "relay", Usage: "hand the payload to the lcwrap that launched the agent ($" + agent.EnvHookURL + "); lcwrap adds this itself"},
	}
	if withEvent {
		flags = append(flags, &cli.StringFlag{Name: "event", Usage: "the hook event `NAME` (the payload does not say it)"})
	}
	return &cli.Command{
		Name:  source,
		Usage: "record one " + label + " hook payload",
		Description: strings.TrimSuffix(wrapText("Reads one hook payload on stdin and records what it shows about the agent's "+
			"session. It prints nothing on stdout and always exits 0: what it could not "+
			"record is one line on stderr. Installed by you (--print-settings prints the "+
			"hooks to "+install+"), it appends to the journal, keeping each "+
			"session's state beside it. Under 'lcwrap -- "+source+"', lcwrap adds hooks of "+
			"its own (--relay) and owns the events; a hook you installed then records "+
			"nothing, so nothing is recorded twice.", 0, 0), "\n"),
		Flags: flags,
		Action: hookAction(std, source, "print-settings", func(cmd *cli.Command) agent.HookCall {
			call := journalCall(cmd)
			if withEvent {
				call.Event = cmd.String("event")
			}
			return call
		}),
	}
}

// geminiHookHelp is the entry of lcwrap hook gemini in helps.
func geminiHookHelp() helpText {
	return helpText{
		examples: []example{
			{"lcwrap hook gemini --print-settings", "the hooks to merge into ~/.gemini/settings.json"},
			{"lcwrap hook gemini < payload.json", "record one payload (what Gemini CLI does)"},
		},
	}
}

// copilotHookHelp is the entry of lcwrap hook copilot in helps.
func copilotHookHelp() helpText {
	return helpText{
		examples: []example{
			{"lcwrap hook copilot --print-settings > ~/.copilot/hooks/lcwrap.json", "install the hooks"},
			{"lcwrap hook copilot --event sessionStart < payload.json", "record one payload (what Copilot CLI does)"},
		},
	}
}

// hookAction is the action of `lcwrap hook AGENT`: with printFlag, print
// the agent's hook settings for lcwrap's own path; otherwise hand the
// payload on stdin to the agent's driver with the call made from the
// command's flags. It prints nothing on stdout and always exits 0 for a
// payload: a hook never fails its agent.
func hookAction(std stdio, source, printFlag string, call func(*cli.Command) agent.HookCall) cli.ActionFunc {
	return func(_ context.Context, cmd *cli.Command) error {
		if cmd.Args().Len() > 0 {
			return usagef(cmd, "unexpected argument %q: the payload comes on standard input", cmd.Args().First())
		}
		h, ok := agentDriver(source).(agent.Hooks)
		if !ok {
			return exitCode(1, "the %s integration records no hooks", source)
		}
		if cmd.Bool(printFlag) {
			exe, err := os.Executable()
			if err != nil {
				return exitCode(1, "cannot tell lcwrap's own path: %v", err)
			}
			fmt.Fprint(std.out, h.HookSettings(exe))
			return nil
		}
		for _, w := range h.Hook(std.in, call(cmd)) {
			fmt.Fprintf(std.err, "lcwrap hook: %s\n", oneLine(w))
		}
		return nil // a hook never fails its agent
	}
}

// journalCall is a hook call that records into the journal (--journal,
// --lock-timeout), under the lcwrap child it runs in, if any.
func journalCall(cmd *cli.Command) agent.HookCall {
	parent := os.Getenv(supervise.EnvChildID)
	return agent.HookCall{
		Relay:   cmd.Bool("relay"),
		Journal: func() (string, error) { return journalPath(cmd) },
		Wait:    cmd.Duration("lock-timeout"),
		Parent:  parent, Root: cmp.Or(os.Getenv(supervise.EnvRootChildID), parent),
	}
}
