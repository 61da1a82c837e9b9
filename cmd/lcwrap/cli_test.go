package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/exitcode"
)

// commandPaths lists every command of the tree below the root, as the
// names that invoke it ("journal", "journal verify").
func commandPaths(c *cli.Command, prefix []string) [][]string {
	var paths [][]string
	for _, sub := range c.Commands {
		p := append(slices.Clone(prefix), sub.Name)
		paths = append(paths, p)
		paths = append(paths, commandPaths(sub, p)...)
	}
	return paths
}

// ranCommand is what a recording action saw.
type ranCommand struct {
	name  string
	set   bool
	value string
}

// recordActions replaces every action of the tree with one that records
// the command that ran and whether (and to what) flag was set there.
func recordActions(c *cli.Command, flag string, ran *[]ranCommand) {
	c.Action = func(_ context.Context, cmd *cli.Command) error {
		r := ranCommand{name: cmd.FullName()}
		if flagNamed(cmd.Flags, flag) != nil {
			r.set, r.value = cmd.IsSet(flag), fmt.Sprint(cmd.Value(flag))
		}
		*ran = append(*ran, r)
		return nil
	}
	for _, sub := range c.Commands {
		recordActions(sub, flag, ran)
	}
}

// A flag written before a subcommand is honoured by the subcommand when it
// has that flag (as if written after its name) and refused with exit 125
// otherwise, naming where it goes: every root flag × every command.
func TestRootFlagsBeforeSubcommand(t *testing.T) {
	tree := newApp(stdio{})
	paths := commandPaths(tree, nil)
	if len(paths) < len(subcommands) {
		t.Fatalf("only %d commands in the tree", len(paths))
	}
	for _, rf := range tree.Flags {
		name := rf.Names()[0]
		var given []string
		value := ""
		switch rf.(type) {
		case *cli.BoolFlag:
			given = []string{"--" + name}
			value = "true"
		case *cli.DurationFlag:
			value = "7s"
		case *cli.IntFlag:
			value = "3"
		case *cli.StringSliceFlag:
			value = "stderr"
		case *cli.StringFlag:
			value = "v1"
		default:
			t.Fatalf("--%s: add a value for %T", name, rf)
		}
		for _, form := range []string{"separate", "equals"} {
			if given == nil || value != "true" {
				if form == "separate" {
					given = []string{"--" + name, value}
				} else {
					given = []string{"--" + name + "=" + value}
				}
			} else if form == "equals" {
				continue
			}
			for _, path := range paths {
				t.Run(name+"/"+form+"/"+strings.Join(path, "_"), func(t *testing.T) {
					var out, errw bytes.Buffer
					std := stdio{out: &out, err: &errw}
					app := newApp(std)
					var ran []ranCommand
					recordActions(app, name, &ran)
					args := append(append([]string{"lcwrap"}, given...), path...)
					if path[0] == "run" {
						args = append(args, "--", "true")
					}
					leaf := app
					for _, p := range path {
						leaf = leaf.Command(p)
					}
					lf := flagNamed(leaf.Flags, name)
					honoured := lf != nil && takesValue(lf) == takesValue(rf)
					code := runApp(context.Background(), app, args, std)
					full := "lcwrap " + strings.Join(path, " ")
					if honoured {
						if code != 0 || len(ran) != 1 || ran[0].name != full || !ran[0].set || !strings.Contains(ran[0].value, value) {
							t.Fatalf("%q: exit %d, ran %+v, stderr %q; want %s to run with --%s %s", args, code, ran, errw.String(), full, name, value)
						}
						return
					}
					msg := errw.String()
					if code != exitUsage || len(ran) != 0 || strings.Count(msg, "\n") != 1 {
						t.Fatalf("%q: exit %d, ran %+v, stderr %q; want exit 125, nothing run, one line", args, code, ran, msg)
					}
					want := fmt.Sprintf("'%s' has no --%s", full, name)
					if len(leaf.Commands) > 0 {
						want = fmt.Sprintf("goes after the command of '%s'", full)
					}
					if !strings.Contains(msg, want) || !strings.Contains(msg, "--"+name) {
						t.Fatalf("%q: stderr %q does not say %q", args, msg, want)
					}
				})
			}
		}
	}
}

// A run's flags before "--" are not moved, and a word that is not a
// command of lcwrap is a command to run.
func TestPlaceRootFlagsLeavesRuns(t *testing.T) {
	app := newApp(stdio{})
	for _, args := range [][]string{
		{"lcwrap", "--emit", "stderr", "--", "status"},
		{"lcwrap", "--emit", "stderr", "make", "test"},
		{"lcwrap", "--journal", "status", "--", "x"}, // status is --journal's value
		{"lcwrap", "--help", "status"},
		{"lcwrap", "status", "--all"},
		{"lcwrap", "--no-journal"},
	} {
		got, err := placeRootFlags(app, args)
		if err != nil || !slices.Equal(got, args) {
			t.Errorf("placeRootFlags(%q) = %q, %v; want it unchanged", args, got, err)
		}
	}
	got, err := placeRootFlags(app, []string{"lcwrap", "--journal", "j", "--no-journal", "journal", "path", "-x"})
	if want := []string{"lcwrap", "journal", "path", "--journal", "j", "--no-journal", "-x"}; err == nil || got != nil {
		t.Errorf("journal path has no --no-journal: got %q, %v", got, err)
	} else if got, err = placeRootFlags(app, []string{"lcwrap", "--journal", "j", "journal", "path", "-x"}); err != nil || !slices.Equal(got, slices.Delete(want, 5, 6)) {
		t.Errorf("got %q, %v", got, err)
	}
}

// helpOf renders the help of the command at path, as --help prints it.
func helpOf(t *testing.T, path ...string) string {
	t.Helper()
	var out, errw bytes.Buffer
	args := append(append([]string{"lcwrap"}, path...), "--help")
	if code := runWith(context.Background(), args, stdio{out: &out, err: &errw}); code != 0 || errw.Len() > 0 {
		t.Fatalf("%q: exit %d, stderr %q", args, code, errw.String())
	}
	return out.String()
}

// Every command's help fits 80 columns and ends with two or three examples
// and an exit status section; 'lcwrap help PATH' prints the same; helps
// has an entry for every command and none for a command that is gone.
func TestHelpEveryCommand(t *testing.T) {
	paths := append([][]string{nil}, commandPaths(newApp(stdio{}), nil)...)
	names := map[string]bool{}
	for _, path := range paths {
		full := strings.Join(append([]string{"lcwrap"}, path...), " ")
		names[full] = true
		t.Run(full, func(t *testing.T) {
			h, ok := helps.Get()[full]
			if !ok {
				t.Fatalf("no entry for %q in helps (help.go): add its examples and exit status", full)
			}
			if n := len(h.examples); n < 2 || n > 3 {
				t.Errorf("%d examples; want two or three", n)
			}
			text := helpOf(t, path...)
			for i, line := range strings.Split(text, "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth {
					t.Errorf("line %d is %d columns: %q", i+1, n, line)
				}
			}
			ex, exit := strings.Index(text, "\nExamples:\n"), strings.Index(text, "\nExit status:\n")
			if ex < 0 || exit < ex {
				t.Fatalf("no Examples then Exit status section:\n%s", text)
			}
			for _, e := range h.examples {
				if !strings.Contains(text[ex:exit], "  "+e.line+"\n") {
					t.Errorf("example %q not shown", e.line)
				}
			}
			if rest := text[exit+len("\nExit status:\n"):]; strings.Contains(rest, "\n\n") {
				t.Errorf("something follows the exit status:\n%s", rest)
			}
			var out bytes.Buffer
			if code := runWith(context.Background(), append([]string{"lcwrap", "help"}, path...), stdio{out: &out, err: &out}); code != 0 || out.String() != text {
				t.Errorf("lcwrap help %s: exit %d, output differs from --help:\n%s", strings.Join(path, " "), code, out.String())
			}
		})
	}
	for name := range helps.Get() {
		if !names[name] {
			t.Errorf("helps has an entry for %q, which is not a command", name)
		}
	}
}

// The root's help lists every command and only the run flags it names;
// the rest are in 'lcwrap run --help'.
func TestRootHelp(t *testing.T) {
	text := helpOf(t)
	for _, c := range subcommands {
		if !strings.Contains(text, "\n  "+c.name+" ") {
			t.Errorf("command %s not listed", c.name)
		}
	}
	run := helpOf(t, "run")
	flags := text[strings.Index(text, "\nFlags"):strings.Index(text, "\nExamples:")]
	for _, f := range runFlags() {
		name := "--" + f.Names()[0]
		if !strings.Contains(run, name) {
			t.Errorf("lcwrap run --help does not list %s", name)
		}
		if strings.Contains(flags, "    "+name+" ") != slices.Contains(helps.Get()["lcwrap"].flags, f.Names()[0]) {
			t.Errorf("lcwrap --help lists %s: %v; helps names it: %v", name, strings.Contains(flags, "    "+name+" "), slices.Contains(helps.Get()["lcwrap"].flags, f.Names()[0]))
		}
	}
	if strings.Contains(text, "GLOBAL") {
		t.Errorf("run flags shown as global options:\n%s", text)
	}
}

func TestSuggest(t *testing.T) {
	names := subcommandNames()
	for word, want := range map[string]string{
		"stauts": "status", "staus": "status", "adpot": "adopt", "tial": "tail",
		"emti": "emit", "verison": "version", "status": "status",
		"make": "", "claude": "", "x": "", "": "", "cancelled": "",
	} {
		if got := suggest(word, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

// Every command's exit status is the one table's (internal/exitcode):
// each of its rows, in order, and nothing else; every command has rows;
// 'lcwrap help exit-codes' lists every code some command gives.
func TestHelpExitStatusIsTheTable(t *testing.T) {
	paths := append([][]string{nil}, commandPaths(newApp(stdio{}), nil)...)
	for _, path := range paths {
		full := strings.Join(append([]string{"lcwrap"}, path...), " ")
		rows := exitcode.For(full)
		if len(rows) == 0 {
			t.Errorf("%s: no row in internal/exitcode's table", full)
			continue
		}
		text := helpOf(t, path...)
		exit := text[strings.Index(text, "\nExit status:\n")+len("\nExit status:\n"):]
		var codes []string
		for line := range strings.Lines(exit) {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
				codes = append(codes, f[0])
			}
		}
		var want []string
		for _, r := range rows {
			want = append(want, strings.Fields(r.Code)[0])
			if !strings.Contains(strings.Join(strings.Fields(exit), " "), r.Meaning) {
				t.Errorf("%s: help does not say %q:\n%s", full, r.Meaning, exit)
			}
		}
		if h := helps.Get()[full]; h.exitNote != "" {
			want = append(want, strings.Fields(h.exitNote)[0])
		}
		if !slices.Equal(codes, want) {
			t.Errorf("%s: exit codes %q, the table's %q", full, codes, want)
		}
	}
	var out, errw bytes.Buffer
	if code := runWith(context.Background(), []string{"lcwrap", "help", "exit-codes"}, stdio{out: &out, err: &errw}); code != 0 || errw.Len() > 0 {
		t.Fatalf("lcwrap help exit-codes: exit %d, %s", code, errw.String())
	}
	all := out.String()
	for i, line := range strings.Split(all, "\n") {
		if n := utf8.RuneCountInString(line); n > helpWidth {
			t.Errorf("lcwrap help exit-codes: line %d is %d columns", i+1, n)
		}
	}
	for _, s := range exitcode.Table {
		given := slices.ContainsFunc(s.Uses, func(u exitcode.Use) bool { return !u.Reserved })
		if listed := strings.Contains(all, "\n  "+s.Shown+" "); listed != given {
			t.Errorf("lcwrap help exit-codes: %s listed %v, given by a command %v", s.Shown, listed, given)
		}
	}
}
