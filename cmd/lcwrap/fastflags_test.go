package main

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// quickLines are command lines readQuick must read exactly as the parser
// does, or decline.
var quickLines = [][]string{
	{"lcwrap", "--", "true"},
	{"lcwrap", "true", "-x", "--y"},
	{"lcwrap", "rm", "--", "-f"},
	{"lcwrap", "--no-journal", "echo", "--"},
	{"lcwrap", "--no-journal", "--", "true"},
	{"lcwrap", "--no-journal=false", "true"},
	{"lcwrap", "--no-journal=maybe", "true"},
	{"lcwrap", "-no-journal", "true"},
	{"lcwrap", "---no-journal", "true"},
	{"lcwrap", "--timeout", "5s", "--kill-after=1s", "--", "sleep", "1"},
	{"lcwrap", "--timeout", "soon", "true"},
	{"lcwrap", "--emit", "stderr", "--emit", "file:/tmp/a,b", "--", "true"},
	{"lcwrap", "--attempt", "0x10", "--", "true"},
	{"lcwrap", "--attempt", "010", "true"},
	{"lcwrap", "--attempt", "1_000", "true"},
	{"lcwrap", "--attempt=-1", "true"},
	{"lcwrap", "--child-id", "-weird", "true"},
	{"lcwrap", "--child-id", "a", "--child-id", "b", "true"},
	{"lcwrap", "--success-exit-codes", "0,3", "true"},
	{"lcwrap", "--restart", "on-failure", "--max-attempts", "3", "--backoff", "10ms", "true"},
	{"lcwrap", "--pty", "--journal=/tmp/j", "--fsync", "always", "--", "true", "--", "x"},
	{"lcwrap", "--heartbeat", "0", "-", "x"},
	{"lcwrap", "--journal"},
	{"lcwrap", "--no-journal"},
	{"lcwrap", "--no-journal", "--"},
	{"lcwrap", "-h"},
	{"lcwrap", "--help", "true"},
	{"lcwrap", "--version"},
	{"lcwrap", "--bogus", "true"},
	{"lcwrap", "-", "true"},
	{"lcwrap", "--=x", "true"},
	{"lcwrap", "run", "--heartbeat", "2s", "--", "true"},
	{"lcwrap", "--no-journal", "--emit", "stdout", "run", "--", "true"},
	{"lcwrap", "--emit", "stdout", "--child-id", "a", "run", "--emit", "file:x", "--child-id", "b", "true"},
	{"lcwrap", "--timeout", "1s", "run", "--bogus", "true"},
	{"lcwrap", "--no-journal", "--", "run", "x"},
	{"lcwrap", "run", "--no-journal", "sh", "-c", "exit 3"},
	{"lcwrap", "run", "--notify", "--ready", "notify", "--ready-timeout", "1m", "true"},
	{"lcwrap", "emit", "--child-id", "c", "--kind", "heartbeat"},
	{"lcwrap", "emit", "--child-id=c", "--kind=state_changed", "--state", "running", "--activity", "a b"},
	{"lcwrap", "emit", "--child-id", "c", "--kind", "heartbeat", "--sequence", "5", "--attempt", "2", "--external", "--adopted-at", "2026-01-01T00:00:00Z"},
	{"lcwrap", "emit", "--child-id", "c", "--kind", "activity", "--details", `{"a":1}`, "--emit", "stdout", "--no-journal", "--source", "s", "--source-epoch", ""},
	{"lcwrap", "emit", "--child-id", "c", "--kind", "heartbeat", "extra"},
	{"lcwrap", "emit", "--kind"},
	{"lcwrap", "emit", "--", "x"},
	{"lcwrap", "emit", "--sequence", "x"},
	{"lcwrap", "emit", "-h"},
	{"lcwrap", "emit"},
}

// parsed is every flag's value and the positional arguments, as a
// command's action sees them.
func parsed(flags []cli.Flag, r flagReader) string {
	var b strings.Builder
	for _, f := range flags {
		n := f.Names()[0]
		var v any
		switch f.(type) {
		case *cli.BoolFlag:
			v = r.Bool(n)
		case *cli.StringFlag:
			v = r.String(n)
		case *cli.StringSliceFlag:
			v = r.StringSlice(n)
		case *cli.DurationFlag:
			v = r.Duration(n)
		case *cli.IntFlag:
			v = r.Int(n)
		case *cli.Int64Flag:
			v = r.Int64(n)
		default:
			panic(fmt.Sprintf("add a case for %T", f))
		}
		if reflect.ValueOf(v).Kind() == reflect.Slice && reflect.ValueOf(v).Len() == 0 {
			v = "[]"
		}
		fmt.Fprintf(&b, "%s=%v set=%v\n", n, v, r.IsSet(n))
	}
	fmt.Fprintf(&b, "name=%s args=%q", r.FullName(), r.Args().Slice())
	return b.String()
}

// viaParser parses args with lcwrap's command tree, stopping at the
// action; ok is false when the parser refused the line or took another
// path (help, version, another command).
func viaParser(t testing.TB, args []string) (got string, ok bool) {
	std := stdio{out: io.Discard, err: io.Discard}
	app := newApp(std)
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	capture := func(flags []cli.Flag) cli.ActionFunc {
		return func(_ context.Context, cmd *cli.Command) error {
			got, ok = parsed(flags, cmd), true
			return nil
		}
	}
	app.Action = capture(runFlags())
	app.Command("run").Action = capture(runFlags())
	app.Command("emit").Action = capture(emitFlags())
	args, err := placeRootFlags(app, args)
	if err == nil {
		err = app.Run(context.Background(), args)
	}
	if err != nil {
		ok = false
	}
	return got, ok
}

// viaQuick reads args as run does before it falls back to the parser.
func viaQuick(args []string) (string, []string, bool) {
	if plainRun(args) {
		if q, ok := quickRunLine(args); ok {
			return parsed(runFlags(), q), q.Args().Slice(), true
		}
		return "", nil, false
	}
	if q, ok := quickEmitLine(args); ok {
		return parsed(emitFlags(), q), nil, true
	}
	return "", nil, false
}

// checkQuick fails when readQuick takes a line the parser refuses or
// reads otherwise, or changes the command's arguments.
func checkQuick(t testing.TB, args []string) (took bool) {
	quick, command, took := viaQuick(args)
	if !took {
		return false
	}
	if len(command) > len(args) || !slices.Equal(command, args[len(args)-len(command):]) {
		t.Fatalf("%q: the command's arguments became %q", args, command)
	}
	if parserQuirk(args, command) {
		return true
	}
	slow, ok := viaParser(t, args)
	if !ok {
		t.Fatalf("%q: readQuick took a line the parser refuses", args)
	}
	if quick != slow {
		t.Fatalf("%q: readQuick and the parser read it differently:\nquick:\n%s\nparser:\n%s", args, quick, slow)
	}
	return true
}

// parserQuirk reports whether urfave/cli misreads args in a way a run
// must not: it drops a "--" right after the command's name ("lcwrap rm --
// -f" would run "rm -f"), skips empty arguments (and then reads a flag
// after the command as its own), and trims spaces (" -x" is a flag to
// it), and takes a program named run after "--" for its run command
// ("lcwrap -- run x" ran x). readQuick passes the command and its
// arguments untouched, as a run promises; such lines are only checked for
// that.
func parserQuirk(args []string, command []string) bool {
	for _, a := range args {
		if a == "" || strings.TrimSpace(a) != a {
			return true
		}
	}
	if len(command) > 0 && command[0] == "run" && len(args) > len(command) && args[len(args)-len(command)-1] == "--" {
		return true
	}
	return len(command) > 1 && command[1] == "--"
}

func TestQuickRunKeepsTheCommandsDashes(t *testing.T) {
	for _, args := range [][]string{{"lcwrap", "rm", "--", "-f"}, {"lcwrap", "--no-journal", "echo", "--"}, {"lcwrap", "run", "echo", "--", "--"}} {
		q, ok := readQuick("lcwrap", runFlags(), args[1:], true)
		if args[1] == "run" {
			q, ok = readQuick("lcwrap run", runFlags(), args[2:], true)
		}
		if !ok {
			t.Fatalf("%q: declined", args)
		}
		want := args[len(args)-len(q.Args().Slice()):]
		if got := q.Args().Slice(); !reflect.DeepEqual(got, want) || got[1] != "--" {
			t.Errorf("%q: the command is %q, want %q", args, got, want)
		}
	}
}

func TestQuickFlagsReadAsTheParser(t *testing.T) {
	took := 0
	for _, args := range quickLines {
		if checkQuick(t, args) {
			took++
		}
	}
	// Most lines above must take the quick way, or it buys nothing.
	if took < 20 {
		t.Fatalf("readQuick took only %d of %d lines", took, len(quickLines))
	}
	for _, args := range [][]string{{"lcwrap", "--", "true"}, {"lcwrap", "--no-journal", "--", "true"}, {"lcwrap", "emit", "--child-id", "c", "--kind", "heartbeat"}} {
		if _, _, ok := viaQuick(args); !ok {
			t.Errorf("%q: the measured start-up line does not take the quick way", args)
		}
	}
}

// The flags readQuick serves take nothing from the environment: IsSet
// would otherwise disagree with the parser's.
func TestQuickFlagsHaveNoSources(t *testing.T) {
	for _, f := range append(runFlags(), emitFlags()...) {
		if s, ok := f.(interface{ GetEnvVars() []string }); ok && len(s.GetEnvVars()) > 0 {
			t.Errorf("--%s reads %v: readQuick does not", f.Names()[0], s.GetEnvVars())
		}
	}
}

func FuzzQuickFlags(f *testing.F) {
	for _, args := range quickLines {
		f.Add(strings.Join(args[1:], "\x00"))
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 512 {
			return
		}
		args := append([]string{"lcwrap"}, strings.Split(line, "\x00")...)
		checkQuick(t, args)
	})
}

// The flag definitions are shared data: a parser that was handed one
// would keep what it parsed in it, and the next command line, or the
// quick reader, would see it. Every command gets copies.
func TestFlagDefinitionsStayUnparsed(t *testing.T) {
	defs := slices.Concat(runFlagDefs(), emitFlagDefs())
	before := cloneFlags(defs)
	for _, args := range quickLines {
		viaParser(t, args)
		viaQuick(args)
	}
	for i, f := range defs {
		if !reflect.DeepEqual(f, before[i]) {
			t.Errorf("--%s's definition changed while command lines were parsed", f.Names()[0])
		}
	}
	if c := cloneFlags(defs[:1]); c[0] == defs[0] {
		t.Fatal("cloneFlags returned the definition itself")
	}
}

func TestAgentFlagNamesEveryAgent(t *testing.T) {
	want := "agent integration: " + strings.Join(agentNames(), ", ") + " ("
	if !strings.HasPrefix(agentFlagDef.Usage, want) {
		t.Fatalf("--agent's usage %q does not start %q", agentFlagDef.Usage, want)
	}
}
