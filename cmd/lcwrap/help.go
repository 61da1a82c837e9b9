package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/lazy"
)

// helpWidth is the width every help line fits in.
const helpWidth = 80

// helpText is what a command's help says beyond its own fields (Usage,
// Description, Flags): two or three examples. Its exit status comes from
// the one table (internal/exitcode), with exitNote after it.
type helpText struct {
	examples []example
	exitNote string   // a line after the exit status
	flags    []string // the root only: the few flags its help lists
}

type example struct{ line, what string }

// exitCodesTopic is 'lcwrap help exit-codes': every exit status.
const exitCodesTopic = "exit-codes"

// helps holds the examples of every command, keyed by its
// full name ("lcwrap journal verify"). A new command adds its entry here:
// TestHelpEveryCommand fails for a command without one. It is built on
// first use (only help needs it), like every table off the run path.
var helps = lazy.Value[map[string]helpText]{Make: func() map[string]helpText {
	m := map[string]helpText{
		"lcwrap": {
			flags: []string{"emit", "journal", "no-journal", "timeout", "pty", "child-id"},
			examples: []example{
				{"lcwrap -- make test", "run a build; exit with its exit code"},
				{"lcwrap --emit stderr -- make test", "the same, with lifecycle lines in the log"},
				{"lcwrap status", "what is running, what ended and how"},
			},
		},
		"lcwrap run": {
			examples: []example{
				{"lcwrap run -- claude -p 'fix the tests'", "same as 'lcwrap -- claude ...'"},
				{"lcwrap --timeout 10m --emit stderr -- make test", "cancel after 10 minutes"},
				{"lcwrap --notify --ready notify -- ./server", "running once it sends READY=1"},
			},
		},
		"lcwrap adopt": {
			examples: []example{
				{"lcwrap adopt 4242", "observe pid 4242 until it is gone"},
				{"lcwrap adopt --pid-file /run/app.pid --emit stderr", "its pid from a file"},
			},
		},
		"lcwrap status": {
			examples: []example{
				{"lcwrap status --all", "every child, ended ones too"},
				{"lcwrap status --file ci.log --mixed", "the children an event stream or CI log shows"},
				{"lcwrap status --reconcile", "record stale children whose process is gone as lost"},
			},
		},
		"lcwrap reconcile": {
			examples: []example{
				{"lcwrap reconcile --snapshot snap.json", "apply a snapshot from a file"},
				{"orchestrator-snapshot | lcwrap reconcile --snapshot -", "from standard input"},
			},
		},
		"lcwrap snapshot": {
			examples: []example{
				{"lcwrap snapshot", "every child, each checked now"},
				{"lcwrap snapshot --reason reconnect | jq .complete", "after a reconnect"},
			},
		},
		"lcwrap cancel": {
			examples: []example{
				{"lcwrap cancel build-7 --reason superseded", "ask build-7 to stop"},
				{"lcwrap cancel build-7 --wait 30s", "and wait for its terminal event"},
			},
			exitNote: "From 2 on, nothing was sent.",
		},
		"lcwrap tail": {
			examples: []example{
				{"lcwrap tail --after 120", "journal lines after journalSequence 120"},
				{"lcwrap tail --follow --child build-7", "one child's events, as they come"},
				{"lcwrap tail -n 20", "the last 20 lines"},
			},
		},
		"lcwrap emit": {
			examples: []example{
				{"lcwrap emit --child-id build-7 --kind activity --activity linking", "one activity event"},
				{"lcwrap emit --child-id job-3 --kind created --state created --external", "a child lcwrap did not start"},
			},
		},
		"lcwrap journal": {
			examples: []example{
				{"lcwrap journal path", "where the journal is"},
				{"lcwrap journal verify || lcwrap journal repair", "check it; unblock it if needed"},
			},
		},
		"lcwrap journal path": {
			examples: []example{
				{"lcwrap journal path", "the journal's path"},
				{"LCWRAP_JOURNAL=ci.jsonl lcwrap journal path", "as the environment resolves it"},
			},
		},
		"lcwrap journal verify": {
			examples: []example{
				{"lcwrap journal verify", "read the whole journal"},
				{"lcwrap journal verify --journal ci.jsonl", "another journal"},
			},
		},
		"lcwrap journal repair": {
			examples: []example{
				{"lcwrap journal repair", "quarantine from the first bad line on"},
				{"lcwrap journal repair --journal ci.jsonl", "another journal"},
			},
		},
		"lcwrap journal unlock": {
			examples: []example{
				{"lcwrap journal unlock --token 0b6c1f7e", "break the lock that token holds"},
				{"lcwrap journal unlock --journal ci.jsonl --token 0b6c1f7e", "another journal"},
			},
		},
		"lcwrap validate": {
			examples: []example{
				{"lcwrap validate events.jsonl", "every line must be a valid event"},
				{"lcwrap validate --mixed --require-events ci.log", "a CI log where lcwrap must have run"},
			},
		},
		"lcwrap top": {
			examples: []example{
				{"lcwrap top", "the live tree of every child in the journal"},
				{"NO_COLOR=1 lcwrap top --journal ci.jsonl", "another journal, without colour"},
				{"lcwrap top --fleet /var/lib/otel/lcwrap/", "many hosts (H: one host at a time)"},
			},
		},
		"lcwrap serve": {
			examples: []example{
				{"lcwrap serve", "the API and the live page on 127.0.0.1:7468"},
				{"lcwrap serve --read-only --listen /run/user/1000/lcwrap.sock", "a unix socket, no cancel"},
			},
		},
		"lcwrap report": {
			examples: []example{
				{"lcwrap report --html report.html", "the whole journal as one HTML file"},
				{"lcwrap report --since 2h --child build-7 --html b.html", "one child's tree, last 2 hours"},
				{"lcwrap report --file ci.log --mixed > report.html", "from a CI log"},
			},
		},
		"lcwrap wait": {
			examples: []example{
				{"lcwrap wait build-7 test-3", "until both end; their final rows"},
				{"lcwrap wait --exit-code --timeout 1h build-7", "exit with build-7's own code"},
				{"lcwrap wait --source claude-code --for waiting --any", "until an agent waits"},
			},
		},
		"lcwrap watch": {
			examples: []example{
				{"lcwrap watch --for waiting,failed,lost", "one line per transition"},
				{"lcwrap watch --for waiting --exec 'notify-send \"$LCWRAP_WATCH_CHILD_ID waits\"'", "a desktop notification"},
				{"lcwrap watch --for failed,lost --exec 'curl -sS -d @- \"$HOOK\"'", "the JSON to a webhook"},
			},
		},
		"lcwrap help": {
			examples: []example{
				{"lcwrap help", "this list of commands"},
				{"lcwrap help status", "one command's help, as 'lcwrap status --help'"},
			},
		},
		"lcwrap version": {
			examples: []example{
				{"lcwrap version", "lcwrap's version"},
				{"lcwrap --version", "the same"},
			},
		},
	}
	m["lcwrap hook"] = hookHelp()
	m["lcwrap hook claude-code"] = claudeCodeHookHelp()
	m["lcwrap hook codex"] = codexHookHelp()
	m["lcwrap hook gemini"] = geminiHookHelp()
	m["lcwrap hook copilot"] = copilotHookHelp()
	return m
}}

func helpCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of lcwrap or of one of its commands ('lcwrap help exit-codes': every exit status)",
		ArgsUsage: "[COMMAND...]",
		Action: func(_ context.Context, cmd *cli.Command) error {
			if args := cmd.Args().Slice(); len(args) == 1 && args[0] == exitCodesTopic {
				writeExitCodes(std.out)
				return nil
			}
			c := cmd.Root()
			for _, name := range cmd.Args().Slice() {
				sub := c.Command(name)
				if sub == nil || sub.Hidden {
					msg := fmt.Sprintf("%s has no command %q", c.FullName(), name)
					if s := suggest(name, commandNames(c)); s != "" {
						msg += fmt.Sprintf("; did you mean: %s %s?", c.FullName(), s)
					}
					return usagef(cmd, "%s", msg)
				}
				c = sub
			}
			writeHelp(std.out, c)
			return nil
		},
	}
}

func versionCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print lcwrap's version",
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef(cmd, "version takes no arguments, not %q", cmd.Args().First())
			}
			printVersion(cmd)
			return nil
		},
	}
}

func printVersion(cmd *cli.Command) {
	fmt.Fprintf(cmd.Root().Writer, "lcwrap version %s\n", version)
}

// printHelp is urfave/cli's HelpPrinter for lcwrap: the same text whatever
// template it names, in the default build and in the urfave_cli_no_template
// one (make build).
func printHelp(w io.Writer, _ string, data any) {
	if cmd, ok := data.(*cli.Command); ok {
		writeHelp(w, cmd)
	}
}

// writeHelp writes cmd's help: usage, description, commands, flags,
// examples and exit status, every line at most helpWidth columns.
func writeHelp(w io.Writer, cmd *cli.Command) {
	var b strings.Builder
	name := cmd.FullName()
	h := helps.Get()[name]
	root := cmd.Root() == cmd
	if root {
		b.WriteString("Usage: lcwrap [FLAG]... [--] COMMAND [ARG]...\n")
		b.WriteString("  or:  lcwrap SUBCOMMAND [FLAG]... [ARG]...\n")
	} else {
		usage := name
		if len(visibleCommands(cmd)) > 0 {
			usage += " COMMAND"
		}
		if len(cmd.VisibleFlags()) > 0 {
			usage += " [FLAG]..."
		}
		if cmd.ArgsUsage != "" {
			usage += " " + cmd.ArgsUsage
		}
		b.WriteString(wrapText("Usage: "+usage, 0, 7))
	}
	if cmd.Usage != "" {
		b.WriteString(wrapText(sentence(cmd.Usage), 0, 0))
	}
	if cmd.Description != "" {
		b.WriteString("\n")
		for _, line := range strings.Split(strings.TrimRight(cmd.Description, "\n"), "\n") {
			b.WriteString(wrapText(line, 0, 0))
		}
	}
	if cmds := visibleCommands(cmd); len(cmds) > 0 {
		b.WriteString("\nCommands:\n")
		var rows [][2]string
		for _, c := range cmds {
			rows = append(rows, [2]string{c.Name, c.Usage})
		}
		writeColumns(&b, rows, 2)
	}
	var rows [][2]string
	for _, f := range cmd.VisibleFlags() {
		if root && !slices.Contains(h.flags, f.Names()[0]) && !isHelpOrVersion(f) {
			continue
		}
		rows = append(rows, flagRow(f))
	}
	if len(rows) > 0 {
		switch {
		case root:
			b.WriteString("\nFlags (the run flags used most; all of them: 'lcwrap run --help'):\n")
		default:
			b.WriteString("\nFlags:\n")
		}
		writeColumns(&b, rows, 2)
	}
	if len(h.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range h.examples {
			b.WriteString(wrapText("  "+e.line, 2, 6))
			b.WriteString(wrapText("      "+e.what, 6, 6))
		}
	}
	if exit := exitcode.For(name); len(exit) > 0 {
		b.WriteString("\nExit status:\n")
		var rows [][2]string
		for _, e := range exit {
			rows = append(rows, [2]string{e.Code, e.Meaning})
		}
		writeColumns(&b, rows, 2)
		if h.exitNote != "" {
			b.WriteString(wrapText("  "+h.exitNote, 2, 2))
		}
	}
	io.WriteString(w, b.String())
}

// writeExitCodes writes every exit status of lcwrap and its commands:
// the one table (internal/exitcode), as docs/run.md shows it, without the
// codes no command gives yet.
func writeExitCodes(w io.Writer) {
	var b strings.Builder
	b.WriteString(wrapText("Exit status of lcwrap and its commands (each command's help lists its own):", 0, 0))
	var rows [][2]string
	for _, s := range exitcode.Table {
		var cmds []string
		for _, u := range s.Uses {
			if !u.Reserved {
				cmds = append(cmds, strings.TrimPrefix(u.Command, "lcwrap "))
			}
		}
		if len(cmds) == 0 {
			continue
		}
		rows = append(rows, [2]string{fmt.Sprintf("%-5s  %s", s.Shown, s.Name), s.Meaning + " [" + strings.Join(cmds, ", ") + "]"})
	}
	b.WriteString("\n")
	writeColumns(&b, rows, 2)
	io.WriteString(w, b.String())
}

func isHelpOrVersion(f cli.Flag) bool {
	n := f.Names()[0]
	return n == "help" || n == "version"
}

// sentence makes a command's Usage a sentence: a capital and a full stop.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	s = strings.ToUpper(string(r)) + s[n:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// flagRow is a flag's name column ("-f, --follow", "    --journal PATH")
// and its description (with its default, when it has one).
func flagRow(f cli.Flag) [2]string {
	usage, placeholder := "", ""
	takesValue := false
	if d, ok := f.(cli.DocGenerationFlag); ok {
		usage, takesValue = d.GetUsage(), d.TakesValue()
		placeholder, usage = unquote(usage)
		if takesValue {
			if placeholder == "" {
				placeholder = typePlaceholder(d.TypeName())
			}
			if v := d.GetValue(); v != "" && v != "0" && v != "0s" && v != `""` && d.IsDefaultVisible() {
				usage += " (default " + strings.Trim(v, `"`) + ")"
			}
		}
	}
	var long, short []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			short = append(short, "-"+n)
		} else {
			long = append(long, "--"+n)
		}
	}
	names := "    "
	if len(short) > 0 {
		names = strings.Join(short, ", ") + ", "
	}
	names += strings.Join(long, ", ")
	if takesValue {
		names += " " + placeholder
	}
	return [2]string{names, usage}
}

// unquote takes urfave/cli's `PLACEHOLDER` marks out of a flag's usage.
func unquote(usage string) (placeholder, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	placeholder = usage[i+1 : i+1+j]
	return placeholder, usage[:i] + placeholder + usage[i+1+j+1:]
}

func typePlaceholder(typeName string) string {
	switch {
	case strings.Contains(typeName, "Duration"), strings.Contains(typeName, "duration"):
		return "DURATION"
	case strings.Contains(typeName, "int"), strings.Contains(typeName, "Int"):
		return "N"
	}
	return "VALUE"
}

// writeColumns writes rows of (name, text) indented by indent: the names
// padded to one column, the texts wrapped after it; a name too long for
// the column puts its text on the next line.
func writeColumns(b *strings.Builder, rows [][2]string, indent int) {
	const maxName = 26
	width := 0
	for _, r := range rows {
		if n := utf8.RuneCountInString(r[0]); n <= maxName {
			width = max(width, n)
		}
	}
	textAt := indent + width + 2
	for _, r := range rows {
		pad := strings.Repeat(" ", indent)
		n := utf8.RuneCountInString(r[0])
		if n > width {
			b.WriteString(pad + r[0] + "\n")
			if r[1] != "" {
				b.WriteString(wrapText(strings.Repeat(" ", textAt)+r[1], textAt, textAt))
			}
			continue
		}
		b.WriteString(wrapText(pad+r[0]+strings.Repeat(" ", textAt-indent-n)+r[1], textAt, textAt))
	}
}

// wrapText breaks line at spaces so that no part is wider than helpWidth;
// the first part keeps its own indentation, the others are indented by
// next. start is where the text proper begins in the first part (nothing
// before it is broken). It returns the parts, each ending in a newline.
func wrapText(line string, start, next int) string {
	var b strings.Builder
	for utf8.RuneCountInString(line) > helpWidth {
		cut := -1
		col := 0
		for i, r := range line {
			if col > helpWidth {
				break
			}
			if r == ' ' && col > start && col > next {
				cut = i
			}
			col++
		}
		if cut < 0 {
			break // one word wider than the line: leave it
		}
		b.WriteString(strings.TrimRight(line[:cut], " ") + "\n")
		line = strings.Repeat(" ", next) + strings.TrimLeft(line[cut:], " ")
	}
	b.WriteString(line + "\n")
	return b.String()
}

// visibleCommands lists c's commands that are not hidden (urfave/cli's
// VisibleCommands leaves out lcwrap's own help command).
func visibleCommands(c *cli.Command) []*cli.Command {
	var cmds []*cli.Command
	for _, sub := range c.Commands {
		if !sub.Hidden {
			cmds = append(cmds, sub)
		}
	}
	return cmds
}

// commandNames lists c's visible commands.
func commandNames(c *cli.Command) []string {
	var names []string
	for _, sub := range visibleCommands(c) {
		names = append(names, sub.Name)
	}
	return names
}

// suggest returns the candidate closest to word (at most two edits, a
// swap of neighbours counting as one), or "".
func suggest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD && d < len(c) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
