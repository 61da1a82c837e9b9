package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/lazy"
	"github.com/lcwrap/lcwrap/internal/supervise"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes of lcwrap itself (the child's own code passes through); the
// one table is internal/exitcode.
const (
	exitUsage = exitcode.Usage // lcwrap's own usage error: nothing was started
)

// usageError is a command-line mistake: exit 125 with one line saying what
// to do.
type usageError struct {
	cmd string // the command whose help to point at
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd interface{ FullName() string }, format string, args ...any) error {
	return &usageError{cmd: cmd.FullName(), msg: fmt.Sprintf(format, args...)}
}

// exitError carries an exit code and an optional message for stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode returns code, printing msg (when not empty) as one line.
func exitCode(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// stdio is where commands read and write; only cmd/lcwrap touches the
// terminal.
type stdio struct {
	in       *os.File
	out, err io.Writer
	// signals is a subscription started before the command line was
	// parsed, for an invocation that is plainly a run (nil otherwise).
	signals *supervise.Signals
}

func run(args []string) int {
	std := stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}
	ctx := context.Background()
	if code, ok := quickEmit(args, std); ok {
		return code
	}
	if len(args) == 1 {
		// Bare lcwrap: what it is and how to use it. Nothing was asked
		// for, so nothing ran: lcwrap's own usage status.
		writeHelp(std.err, newApp(std))
		return exitUsage
	}
	if msg := mistypedCommand(args); msg != "" {
		return report(&usageError{cmd: "lcwrap", msg: msg}, std.err)
	}
	if plainRun(args) {
		// Installing signal handlers takes a round trip with the runtime
		// per signal: let it overlap the parsing of the command line.
		std.signals = supervise.Subscribe()
		if code, ok := quickRun(ctx, args, std); ok {
			return code
		}
	}
	return runWith(ctx, args, std)
}

// quickRun runs a plain run whose command line readQuick takes, without
// setting up the parser (what every "lcwrap -- CMD" pays at start-up);
// false when it declines.
func quickRun(ctx context.Context, args []string, std stdio) (int, bool) {
	q, ok := quickRunLine(args)
	if !ok {
		return 0, false
	}
	return report(runMain(ctx, std, q), std.err), true
}

// quickRunLine reads a plain run's command line (see readQuick).
func quickRunLine(args []string) (*quickFlags, bool) {
	name, rest := "lcwrap", args[1:]
	if len(rest) > 0 && rest[0] == "run" {
		name, rest = "lcwrap run", rest[1:]
	}
	q, ok := readQuick(name, plainRunFlags.Get(), rest, true)
	if !ok || name != "lcwrap" || q.dashed || q.args[0] != "run" {
		return q, ok
	}
	// "lcwrap --flag run ...": the flags apply as if written after run
	// (placeRootFlags), before run's own.
	r, ok := readQuick("lcwrap run", plainRunFlags.Get(), q.args[1:], true)
	if !ok {
		return nil, false
	}
	for k, v := range q.values {
		switch v := v.(type) {
		case []string:
			after, _ := r.values[k].([]string)
			r.values[k] = append(v, after...)
		default:
			if _, set := r.values[k]; !set {
				r.values[k] = v
			}
		}
	}
	return r, true
}

// quickEmit is quickRun for "lcwrap emit [flags]".
func quickEmit(args []string, std stdio) (int, bool) {
	q, ok := quickEmitLine(args)
	if !ok {
		return 0, false
	}
	return report(emitMain(std, q), std.err), true
}

// quickEmitLine reads an emit's command line (see readQuick).
func quickEmitLine(args []string) (*quickFlags, bool) {
	if len(args) < 2 || args[1] != "emit" {
		return nil, false
	}
	return readQuick("lcwrap emit", emitFlagDefs(), args[2:], false)
}

// plainRunFlags are the run flags plainRun and quickRunLine read, made
// once: neither changes them (the parser gets flags of its own).
var plainRunFlags = lazy.Value[[]cli.Flag]{Make: runFlagDefs}

// plainRun reports whether args are certainly a run: "lcwrap [run flags]
// [--] CMD ...", or "lcwrap run ...". It skips the root's own flags (and
// the values of those that take one) and looks at the first argument
// after them; anything it does not recognise is left to the parser.
func plainRun(args []string) bool {
	_, i, ok := skipFlags(plainRunFlags.Get(), args)
	switch {
	case !ok || i >= len(args):
		return false // --help, --version, a typo: the parser decides
	case args[i] == "--":
		return i+1 < len(args)
	case args[i] == "run":
		return true
	}
	return !slices.ContainsFunc(subcommands, func(c subcommand) bool { return c.name == args[i] })
}

// skipFlags reads the flags at the start of args[1:] that are among
// flags, each with its value. It returns where each one starts, the index
// of the first argument after them ("--", a word, or len(args)), and false
// when it stopped at a flag that is not among them (the index is then that
// flag's).
func skipFlags(flags []cli.Flag, args []string) (starts []int, end int, ok bool) {
	i := 1
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := flagNamed(flags, name)
		if f == nil {
			return starts, i, false
		}
		starts = append(starts, i)
		i++
		if takesValue(f) && !hasValue {
			i++
		}
	}
	return starts, min(i, len(args)), true
}

// subcommand is one of lcwrap's own commands.
type subcommand struct {
	name string
	make func(stdio) *cli.Command
}

// subcommands are lcwrap's own commands; any other first argument is a
// command to run (the prefix form).
var subcommands = []subcommand{
	{"run", runCommand},
	{"adopt", adoptCommand},
	{"status", statusCommand},
	{"reconcile", reconcileCommand},
	{"snapshot", snapshotCommand},
	{"cancel", cancelCommand},
	{"tail", tailCommand},
	{"wait", waitCommand},
	{"watch", watchCommand},
	{"emit", emitCommand},
	{"journal", journalCommand},
	{"validate", validateCommand},
	{"top", topCommand},
	{"serve", serveCommand},
	{"report", reportCommand},
	{"hook", hookCommand},
	{"help", helpCommand},
	{"version", versionCommand},
}

func runWith(ctx context.Context, args []string, std stdio) int {
	return runApp(ctx, newApp(std), args, std)
}

// runApp runs args on the command tree app and returns the exit code.
func runApp(ctx context.Context, app *cli.Command, args []string, std stdio) int {
	args, err := placeRootFlags(app, args)
	if err == nil {
		err = app.Run(ctx, args)
	}
	return report(err, std.err)
}

// report turns an error from the command tree into an exit code, printing
// one line for it.
func report(err error, w io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		help := "lcwrap --help"
		switch {
		case ue.cmd != "" && ue.cmd != "lcwrap":
			help = ue.cmd + " --help"
		case strings.HasPrefix(ue.msg, "-") || strings.HasPrefix(ue.msg, "unknown flag") || strings.HasPrefix(ue.msg, "invalid value"):
			help = "lcwrap run --help" // the root's help shows only a few run flags
		}
		fmt.Fprintf(w, "lcwrap: %s (see '%s')\n", oneLine(ue.msg), help)
		return exitUsage
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(w, "lcwrap: %s\n", oneLine(ee.msg))
		}
		return ee.code
	}
	// Anything else comes from argument parsing before an action ran.
	fmt.Fprintf(w, "lcwrap: %s (see 'lcwrap --help')\n", oneLine(err.Error()))
	return exitUsage
}

// oneLine makes s one line for a terminal: whatever a terminal would act
// on is escaped, and runs of space collapse (termtext.Clean).
func oneLine(s string) string { return termtext.Clean(s) }

func newApp(std stdio) *cli.Command {
	cli.HelpPrinter = printHelp
	cli.VersionPrinter = printVersion
	one := 1
	root := &cli.Command{
		Name:                      "lcwrap",
		Usage:                     "run COMMAND, or observe a process already running, and report its lifecycle as schema-v1 JSON Lines, including what lcwrap cannot know; an exit code is not task success",
		Version:                   version,
		Writer:                    std.out,
		ErrWriter:                 std.err,
		ExitErrHandler:            func(context.Context, *cli.Command, error) {},
		OnUsageError:              onUsageError,
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           true,
		StopOnNthArg:              &one,
		Flags:                     localFlags(runFlags()),
		Action:                    runAction(std),
	}
	for _, c := range subcommands {
		// A plain run (std.signals set) needs no other command: setting
		// up the whole tree would only slow its start.
		if std.signals == nil || c.name == "run" {
			root.Commands = append(root.Commands, c.make(std))
		}
	}
	setUsageHandlers(root)
	return root
}

// localFlags marks the root command's flags (the run flags of the prefix
// form) as its own: urfave/cli would otherwise offer them to, and accept
// them in, every subcommand.
func localFlags(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		switch t := f.(type) {
		case *cli.BoolFlag:
			t.Local = true
		case *cli.DurationFlag:
			t.Local = true
		case *cli.IntFlag:
			t.Local = true
		case *cli.StringFlag:
			t.Local = true
		case *cli.StringSliceFlag:
			t.Local = true
		default:
			panic(fmt.Sprintf("localFlags: add a case for %T", f))
		}
	}
	return flags
}

func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	return &usageError{cmd: cmd.FullName(), msg: flagMessage(cmd, err.Error())}
}

// flagMessage rewrites urfave/cli's flag errors the way lcwrap writes
// flags, with two dashes (one for a one-letter name), and suggests the
// nearest flag for an unknown one.
func flagMessage(cmd *cli.Command, msg string) string {
	dashed := func(name string) string {
		name = strings.TrimLeft(name, "-")
		if len([]rune(name)) == 1 {
			return "-" + name
		}
		return "--" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + dashed(name)
		var names []string
		for _, f := range cmd.VisibleFlags() {
			names = append(names, f.Names()...)
		}
		if s := suggest(name, names); s != "" {
			msg += "; did you mean " + dashed(s) + "?"
		}
		return msg
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return dashed(name) + " needs a value"
	}
	if head, rest, ok := strings.Cut(msg, " for flag -"); ok && strings.HasPrefix(head, "invalid value ") {
		name, tail, _ := strings.Cut(rest, ":")
		return head + " for " + dashed(name) + ": " + plainParseError(strings.TrimSpace(tail))
	}
	return msg
}

// plainParseError says what a flag's value should have been, for the
// errors of strconv and time that urfave/cli passes on as they are
// ("strconv.ParseInt: parsing "abc": invalid syntax").
func plainParseError(s string) string {
	switch {
	case strings.HasSuffix(s, "value out of range"):
		return "out of range"
	case strings.HasPrefix(s, "strconv.ParseInt"), strings.HasPrefix(s, "strconv.ParseUint"):
		return "not a whole number"
	case strings.HasPrefix(s, "strconv.ParseFloat"):
		return "not a number"
	case strings.HasPrefix(s, "strconv.ParseBool"):
		return "not true or false"
	case strings.HasPrefix(s, "time: missing unit"):
		return "a duration needs a unit, like 10s or 5m"
	case strings.HasPrefix(s, "time: "):
		return "not a duration, like 250ms, 10s, 5m or 1h"
	}
	return s
}

// setUsageHandlers makes every command report flag mistakes as usage errors
// (exit 125) and never print its own help on error, and take a repeatable
// flag's value whole ("--emit file:/tmp/a,b" is one sink: urfave/cli
// would split it at the comma in every command that does not say so).
func setUsageHandlers(c *cli.Command) {
	if c.OnUsageError == nil {
		c.OnUsageError = onUsageError
	}
	c.DisableSliceFlagSeparator = true
	for _, sub := range c.Commands {
		setUsageHandlers(sub)
	}
}
