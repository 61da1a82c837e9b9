package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

const runDescription = `Starts COMMAND with its arguments untouched, on lcwrap's own stdin, stdout
and stderr, and reports its lifecycle (created, starting, running, then a
terminal event) to the journal and every --emit sink.

lcwrap exits with the command's exit code (see Exit status below);
--success-exit-codes only decides between completed and failed.

HUP, INT and TERM sent to lcwrap are cancel requests for the whole job: they
reach the command's process group, and whatever is still alive --kill-after
later gets SIGKILL. QUIT, USR1 and USR2 reach the command itself.

With --notify the command gets a NOTIFY_SOCKET (systemd's sd_notify
protocol): READY=1 makes it running (with --ready notify it stays starting
until then; --ready-timeout cancels it, exit 124), STATUS= is activity,
WATCHDOG=1 a heartbeat of its own (--watchdog: the only heartbeats),
LCWRAP_STATE=waiting|running a state change. Only the command's own
process tree may speak there.

With --restart each attempt is a new lifecycle (child id <id>-a<attempt>,
same root, attempt+1); a cancel request stops the loop, and lcwrap exits
with the last attempt's code.`

func runFlags() []cli.Flag { return cloneFlags(runFlagDefs()) }

// runFlagDefs are runFlags' definitions (see journalFlagDefs).
func runFlagDefs() []cli.Flag {
	return slices.Concat(writerFlagDefs(), runOwnFlagDefs, notifyRestartFlagDefs)
}

var runOwnFlagDefs = []cli.Flag{
	&cli.DurationFlag{Name: "heartbeat", Value: supervise.DefaultHeartbeat, Usage: "interval of heartbeat events, at least 100ms; 0 for none (the heartbeat capability is then unknown)"},
	&cli.DurationFlag{Name: "timeout", Usage: "cancel the command (SIGTERM to its process group) after this long; lcwrap then exits 124"},
	&cli.DurationFlag{Name: "kill-after", Value: supervise.DefaultKillAfter, Usage: "SIGKILL whatever is still alive this long after a cancel request"},
	&cli.StringFlag{Name: "success-exit-codes", Value: "0", Usage: "exit codes reported as completed, comma-separated (never changes lcwrap's exit code)"},
	&cli.BoolFlag{Name: "kill-leftovers", Usage: "terminate processes of the command's group that outlive it (SIGTERM, then SIGKILL after --kill-after)"},
	&cli.BoolFlag{Name: "subreaper", Usage: "reap orphaned descendants (always on as PID 1)"},
	&cli.StringFlag{Name: "child-id", Usage: "child id of this lifecycle (default: generated from the command name)"},
	&cli.StringFlag{Name: "root-child-id", Usage: "root child id of the lineage (default $LCWRAP_ROOT_CHILD_ID, else the child id)"},
	&cli.StringFlag{Name: "parent-child-id", Usage: "parent child id (default $LCWRAP_CHILD_ID, set by an enclosing lcwrap)"},
	&cli.IntFlag{Name: "attempt", Usage: "attempt number of this lifecycle (0 for the first)"},
	&cli.BoolFlag{Name: "pty", Usage: "give the command a new terminal (stdin, stdout and stderr; its output comes out on lcwrap's stdout); lcwrap's own terminal is raw while it runs, restored when it ends"},
	agentFlagDef,
	&cli.StringFlag{Name: "activity", Value: supervise.ActivityNone, Usage: "what else becomes activity events: none, or output (the command's latest output line: redacted, escapes stripped, at most one per second). sd_notify STATUS= messages (--notify) are activity either way"},
}

func runCommand(std stdio) *cli.Command {
	one := 1
	return &cli.Command{
		Name:         "run",
		Usage:        "start COMMAND and report its lifecycle (what 'lcwrap COMMAND' does)",
		ArgsUsage:    "[--] COMMAND [ARGS...]",
		Description:  runDescription,
		StopOnNthArg: &one,
		Flags:        runFlags(),
		Action:       runAction(std),
	}
}

func runAction(std stdio) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error { return runMain(ctx, std, cmd) }
}

// runMain is a run: the parser's (runAction) or quickRun's.
func runMain(ctx context.Context, std stdio, cmd flagReader) error {
	// Installing the handlers takes a while: it started before the
	// command line was parsed (plainRun), or starts now, and goes on in
	// the background while the flags are checked.
	sigs := std.signals
	if sigs == nil {
		sigs = supervise.Subscribe()
		defer sigs.Stop()
	}
	// A subscription made before parsing (std.signals) belongs to the
	// process, which exits right after the run: it is never stopped, so a
	// signal that arrives after the last event is held rather than fatal,
	// and the exit does not wait for the runtime to uninstall handlers.
	argv := cmd.Args().Slice()
	if len(argv) == 0 || argv[0] == "" {
		return usagef(cmd, "no command to run: put it after lcwrap's flags, e.g. 'lcwrap -- make test'")
	}
	cfg, err := runConfig(cmd, argv)
	if err != nil {
		return err
	}
	ag, err := prepareAgent(ctx, cmd, std, &cfg)
	if err != nil {
		return err
	}
	cfg.Signals = sigs
	set, err := openSinks(cmd, std)
	if err != nil {
		return err
	}
	if cmd.Bool("pty") {
		out, _ := std.out.(*os.File)
		p, err := supervise.OpenPTY(std.in, out)
		if err != nil {
			set.Close()
			return exitCode(exitUsage, "--pty: %v", err)
		}
		defer p.Close() // restores lcwrap's terminal on every way out, a panic included
		cfg.PTY = p
	}
	if set.JournalPath != "" {
		if abs, err := filepath.Abs(set.JournalPath); err == nil {
			cfg.ExtraEnv = append(cfg.ExtraEnv, journal.EnvPath+"="+abs)
		}
	}
	// The child gets lcwrap's own stdio, unless something else must
	// see or share a stream (supervise.Interpose decides).
	sinks := set.Sinks(std, false) // the journal sink queues: its lock never holds up the child
	ip, err := supervise.Interpose(supervise.Outputs{
		Stdout: output(std.out, ag.stdout(std.out), set.Stdout),
		Stderr: output(std.err, std.err, set.Stderr),
		Watch:  cfg.Activity == supervise.ActivityOutput,
		PTY:    cfg.PTY != nil,
	})
	if err != nil {
		set.Close()
		return exitCode(exitUsage, "%v", err)
	}
	defer ip.Close()
	streams := ip.Streams
	ip.Apply(&cfg) // the child's streams, decided once: Run does not interpose again
	sinks = append(sinks, ip.Sinks...)
	warn := std
	if ip.Messages != nil {
		warn.err = ip.Messages
	}
	cfg.Stdin = std.in
	cfg.Emitter = emit.New(emit.Options{Source: cmd.String("source"), OnSinkError: sinkWarning(warn)}, sinks...)
	ag.attach(cfg.Emitter)

	res, err := supervise.Run(ctx, cfg)
	ag.finish()
	closeErr := cfg.Emitter.Close()
	for _, s := range streams {
		s.Close()
	}
	// The streams are closed now: what is left goes to stderr itself.
	var joined interface{ Unwrap() []error }
	if errors.As(closeErr, &joined) {
		for _, e := range joined.Unwrap() {
			sinkWarning(std)("", e)
		}
	}
	if err != nil {
		return exitCode(exitUsage, "%v", err)
	}
	if res.EventErr != nil {
		fmt.Fprintf(std.err, "lcwrap: internal error, an event was not written: %v\n", res.EventErr)
	}
	switch {
	case res.StartErr != nil:
		return exitCode(res.ExitCode, "%s", redact.Text(res.StartErr.Error()))
	case res.State == event.StateLost:
		return exitCode(res.ExitCode, "the command's exit status could not be read")
	}
	if res.ExitCode != 0 {
		return exitCode(res.ExitCode, "")
	}
	return nil
}

// output describes one of lcwrap's streams for supervise.Interpose: raw is
// lcwrap's own stream, w what the child's bytes pass through on their way
// to it (raw itself, or an agent's tap), events whether event lines share it.
func output(raw, w io.Writer, events bool) supervise.Output {
	o := supervise.Output{Events: events}
	f, isFile := raw.(*os.File)
	if isFile {
		o.File = f
	}
	if !isFile || w != raw {
		o.Via = w
	}
	return o
}

// minEventInterval is the least value of every flag that sets how often
// lcwrap writes events (--heartbeat, --watchdog, --backoff): each one is a
// line in a journal other processes share, and a nanosecond heartbeat
// writes tens of thousands of them a second.
const minEventInterval = 100 * time.Millisecond

// checkRate refuses a positive --name below minEventInterval; zero, where
// the flag allows it (zero says what), passes.
func checkRate(cmd flagReader, name, zero string) error {
	d := cmd.Duration(name)
	if d > 0 && d < minEventInterval || d == 0 && zero == "" && cmd.IsSet(name) {
		alt := ""
		if zero != "" {
			alt = " (or " + zero + ")"
		}
		return usagef(cmd, "--%s %v is too often: give at least %v%s; each one is an event in the journal", name, d, minEventInterval, alt)
	}
	return nil
}

// runConfig reads and checks the run flags; every mistake is a usage
// error, found before anything is opened or started.
func runConfig(cmd flagReader, argv []string) (supervise.Config, error) {
	cfg := supervise.Config{
		Argv:          argv,
		Heartbeat:     cmd.Duration("heartbeat"),
		Timeout:       cmd.Duration("timeout"),
		KillAfter:     cmd.Duration("kill-after"),
		KillLeftovers: cmd.Bool("kill-leftovers"),
		Subreaper:     cmd.Bool("subreaper"),
	}
	for _, d := range []string{"heartbeat", "timeout", "kill-after"} {
		if cmd.Duration(d) < 0 {
			return cfg, usagef(cmd, "--%s must not be negative", d)
		}
	}
	if err := checkRate(cmd, "heartbeat", "0 for none"); err != nil {
		return cfg, err
	}
	codes, err := parseExitCodes(cmd.String("success-exit-codes"))
	if err != nil {
		return cfg, usagef(cmd, "--success-exit-codes: %v", err)
	}
	cfg.SuccessCodes = codes
	if err := notifyRestartConfig(cmd, &cfg); err != nil {
		return cfg, err
	}
	cfg.Activity = cmd.String("activity")
	if cfg.Activity != supervise.ActivityNone && cfg.Activity != supervise.ActivityOutput {
		return cfg, usagef(cmd, "--activity %q: choose none or output", cfg.Activity)
	}
	if cmd.Int("attempt") < 0 {
		return cfg, usagef(cmd, "--attempt must be 0 or more")
	}
	ids := map[string]string{
		"child-id":        cmd.String("child-id"),
		"root-child-id":   cmp.Or(cmd.String("root-child-id"), os.Getenv(supervise.EnvRootChildID)),
		"parent-child-id": cmp.Or(cmd.String("parent-child-id"), os.Getenv(supervise.EnvChildID)),
	}
	for name, id := range ids {
		if err := checkID(id); err != nil {
			return cfg, usagef(cmd, "--%s %q: %v", name, id, err)
		}
	}
	if cmd.String("source") == "" {
		return cfg, usagef(cmd, "--source must not be empty")
	}
	cfg.ChildID = ids["child-id"]
	if cfg.ChildID == "" {
		cfg.ChildID = emit.NewChildID(redact.Text(argv[0])) // ids are never redacted later
	}
	cfg.Lineage = event.Lineage{
		RootChildID:   cmp.Or(ids["root-child-id"], cfg.ChildID),
		ParentChildID: ids["parent-child-id"],
		Attempt:       int64(cmd.Int("attempt")),
	}
	return cfg, nil
}

// checkID accepts an empty id (not given) or up to 128 printable
// characters without spaces.
func checkID(id string) error {
	if len(id) > 128 {
		return errors.New("longer than 128 bytes")
	}
	for _, r := range id {
		if r == unicode.ReplacementChar || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return errors.New("use printable characters without spaces")
		}
	}
	return nil
}

// parseExitCodes parses "0,3": codes 0–255.
func parseExitCodes(v string) ([]int, error) {
	var codes []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 255 {
			return nil, fmt.Errorf("%q is not an exit code (0-255); give a comma-separated list such as 0,3", strings.TrimSpace(f))
		}
		codes = append(codes, n)
	}
	return codes, nil
}
