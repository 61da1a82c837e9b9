package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// The test binary doubles as the lcwrap binary for testscript and as every
// helper process the tests need (see helpers_test.go).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"lcwrap": func() { os.Exit(run(os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: scriptCmds(),
		// [need:TOOL]: TOOL is on PATH. A missing one makes the condition
		// false locally (the script skips, naming what to install) and
		// fails the script under CI=true.
		Condition: func(cond string) (bool, error) {
			name, ok := strings.CutPrefix(cond, "need:")
			if !ok {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := testtool.Look(name, "see .ci/run")
			if err != nil && testtool.CI() {
				return false, err
			}
			return err == nil, nil
		},
		Setup: func(env *testscript.Env) error {
			// The shared golden streams (some hold bytes txtar cannot).
			src, err := filepath.Abs("../../testdata/streams")
			if err != nil {
				return err
			}
			dst := filepath.Join(env.WorkDir, "streams")
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			entries, err := os.ReadDir(src)
			if err != nil {
				return err
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
					return err
				}
			}
			// Under -race every lcwrap process would pause 1s at exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// Keep every test away from the real default journal.
			env.Setenv("LCWRAP_JOURNAL", filepath.Join(env.WorkDir, "state", "journal.jsonl"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			return nil
		},
	})
}

// scriptCmds are the commands testscript files may use beyond the built-in
// ones.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// codexmock [COMMAND...]: a mock Responses API for the real codex.
		"codexmock": codexMock,
		// exits CODE PROG [ARGS...]: run PROG and require exactly that exit
		// code; stdout and stderr are kept for the next checks.
		"exits": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) < 2 {
				ts.Fatalf("usage: exits CODE PROG [ARGS...]")
			}
			want, err := strconv.Atoi(args[0])
			if err != nil {
				ts.Fatalf("exits: bad code %q", args[0])
			}
			err = ts.Exec(args[1], args[2:]...)
			got := 0
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				got = ee.ExitCode()
			case err != nil:
				ts.Fatalf("exits: %v", err)
			}
			if got != want {
				ts.Fatalf("%s exited %d, want %d", args[1], got, want)
			}
		},
	}
}

func TestPlainRun(t *testing.T) {
	yes := [][]string{
		{"lcwrap", "make", "test"}, {"lcwrap", "--", "status"}, {"lcwrap", "run", "--", "x"},
		{"lcwrap", "--no-journal", "--", "true"}, {"lcwrap", "--emit", "stderr", "make"},
		{"lcwrap", "--emit=stderr", "--heartbeat", "0", "claude", "-p", "x"},
	}
	no := [][]string{
		{"lcwrap"}, {"lcwrap", "status"}, {"lcwrap", "--journal", "j", "status"}, {"lcwrap", "--help"},
		{"lcwrap", "--version"}, {"lcwrap", "--"}, {"lcwrap", "--bogus", "x"}, {"lcwrap", "help"},
		{"lcwrap", "adopt", "1"}, {"lcwrap", "--emit"},
	}
	for _, a := range yes {
		if !plainRun(a) {
			t.Errorf("plainRun(%q) = false", a)
		}
	}
	for _, a := range no {
		if plainRun(a) {
			t.Errorf("plainRun(%q) = true", a)
		}
	}
}

// The table plainRun reads names every command the app has.
func TestSubcommandsTable(t *testing.T) {
	app := newApp(stdio{})
	if len(app.Commands) != len(subcommands) {
		t.Fatalf("%d commands, %d in the table", len(app.Commands), len(subcommands))
	}
	for i, c := range app.Commands {
		if c.Name != subcommands[i].name {
			t.Errorf("command %d is %q, the table says %q", i, c.Name, subcommands[i].name)
		}
	}
}
