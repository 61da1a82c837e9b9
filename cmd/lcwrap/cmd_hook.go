package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

// hookWait bounds every wait of a hook call (the session's state lock,
// the journal's lock, the relay): a hook never holds its agent up long.
const hookWait = 500 * time.Millisecond

func hookCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "record an agent's hook payload (Claude Code: lcwrap hook claude-code)",
		ArgsUsage: "claude-code",
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
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().First() != claudecode.Source || cmd.Args().Len() != 1 {
				return usagef(cmd, "name the agent: 'lcwrap hook claude-code'")
			}
			if cmd.Bool("print-settings") {
				exe, err := os.Executable()
				if err != nil {
					return exitCode(1, "cannot tell lcwrap's own path: %v", err)
				}
				fmt.Fprint(std.out, claudecode.UserSettings(exe))
				return nil
			}
			for _, w := range hookCall(cmd, std.in) {
				fmt.Fprintf(std.err, "lcwrap hook: %s\n", oneLine(w))
			}
			return nil // a hook never fails its agent
		},
	}
}

// hookCall records the payload on in and returns what it could not do.
func hookCall(cmd *cli.Command, in io.Reader) []string {
	raw, err := io.ReadAll(io.LimitReader(in, claudecode.MaxPayload+1))
	io.Copy(io.Discard, in) // the agent never writes into a closed pipe
	if err != nil {
		return []string{fmt.Sprintf("cannot read the payload: %v", err)}
	}
	url := os.Getenv(claudecode.EnvHookURL)
	switch {
	case cmd.Bool("relay"):
		if url == "" {
			return []string{"--relay without $" + claudecode.EnvHookURL + ": nowhere to relay to; not recorded"}
		}
		if err := hookhttp.Post(url, os.Getenv(claudecode.EnvHookToken), raw, cmd.Duration("lock-timeout")*4); err != nil {
			return []string{fmt.Sprintf("the launching lcwrap did not take the payload; not recorded: %v", err)}
		}
		return nil
	case url != "":
		return nil // the lcwrap that launched the agent owns its events
	}
	path := cmd.String("journal")
	if path == "" {
		if path, err = journal.DefaultPath(); err != nil {
			return []string{fmt.Sprintf("cannot tell where the journal is; not recorded: %v", err)}
		}
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	parent := os.Getenv(supervise.EnvChildID)
	return agent.HookAppend{
		Source: claudecode.Source, Prefix: claudecode.ChildPrefix, Limits: claudecode.Limits,
		Journal: path, Wait: cmd.Duration("lock-timeout"),
		Parent: parent, Root: firstSet(os.Getenv(supervise.EnvRootChildID), parent),
	}.Record(claudecode.Normalize(raw))
}

// hookHelp is the hook command's entry in helps.
func hookHelp() helpText {
	return helpText{
		examples: []example{
			{"lcwrap hook claude-code --print-settings", "the hooks to merge into ~/.claude/settings.json"},
			{"lcwrap hook claude-code < payload.json", "record one payload (what Claude Code does)"},
		},
	}
}
