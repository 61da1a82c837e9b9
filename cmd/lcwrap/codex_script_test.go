package main

import (
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lcwrap/lcwrap/internal/mockresponses"
)

// codexMock is the script command `codexmock [COMMAND...]`: it starts a
// mock Responses API on 127.0.0.1 whose model runs each COMMAND through
// codex's exec_command tool (one per turn step) and then answers "done",
// and points a private HOME and CODEX_HOME ($WORK/home) at it. The mock
// stops, and the app-server daemons codex started under that CODEX_HOME
// are ended, when the script ends.
func codexMock(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("codexmock does not fail")
	}
	var script []mockresponses.Step
	for _, c := range args {
		script = append(script, mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec(c)}})
	}
	srv, err := mockresponses.Start(script...)
	if err != nil {
		ts.Fatalf("codexmock: %v", err)
	}
	home := ts.MkAbs("home")
	codexHome := filepath.Join(home, ".codex")
	if err := mockresponses.WriteCodexHome(codexHome, srv.URL); err != nil {
		ts.Fatalf("codexmock: %v", err)
	}
	ts.Setenv("HOME", home)
	ts.Setenv("CODEX_HOME", codexHome)
	ts.Setenv(mockresponses.EnvKey, "sk-lcwrap-test-not-a-key")
	ts.Defer(func() {
		srv.Close()
		mockresponses.StopDaemons(codexHome)
	})
}
