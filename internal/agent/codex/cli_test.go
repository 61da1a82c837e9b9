package codex

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
)

// TestRealExecJSON runs the real codex exec --json against the mock: a
// command execution, then a final message; every line maps to the
// session's events without a guessed state.
func TestRealExecJSON(t *testing.T) {
	env, codexHome, srv := codexEnv(t, mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo lcwrap-marker")}})
	out := runExec(t, env, "run the marker command")
	if srv.Requests() < 2 {
		t.Fatalf("the mock answered %d requests, want 2 (tool call, then final message)", srv.Requests())
	}
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "t1"})
	var r ExecReader
	feed(tr, out, r.Line)
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.Check(t)
	got := sink.Summaries()
	for _, want := range []string{
		"created created",
		"state_changed starting",
		"state_changed running",
		"activity prompt submitted",
		"activity command: /bin/bash -lc 'echo lcwrap-marker'",
		"activity command done",
		"activity agent message",
		"activity turn completed",
		"terminal lost",
	} {
		if !strings.Contains(got, want+"\n") && !strings.Contains(got, want+" ") {
			t.Errorf("no %q event in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "waiting") {
		t.Errorf("exec never says it waits, yet:\n%s", got)
	}
	all := sink.All()
	if !strings.Contains(all, `"reported":{"usage":{`) {
		t.Errorf("the turn's usage is not recorded as codex's report:\n%s", all)
	}
	if strings.Contains(all, "sk-lcwrap-test") {
		t.Errorf("the key reached an event")
	}
	if os.Getenv("LCWRAP_RECORD") != "" {
		record(t, "exec-command.jsonl", out)
		rollouts, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
		if len(rollouts) == 1 {
			b, _ := os.ReadFile(rollouts[0])
			record(t, "rollout-exec-command.jsonl", b)
		}
	}
}

// TestRealExecFailed: the API refuses the request (HTTP 400); codex
// reports the error and the failed turn, and exits 1. Both are codex's
// reports on the session (diagnostics), never a state of their own.
func TestRealExecFailed(t *testing.T) {
	env, _, _ := codexEnv(t, mockresponses.Step{Status: 400, Text: "mock refuses this request"})
	out := runExecStatus(t, env, "anything", 1)
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "t2"})
	var r ExecReader
	feed(tr, out, r.Line)
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.Check(t)
	all := sink.All()
	for _, want := range []string{`"reportedError":"error"`, `"reportedError":"turn.failed"`, `mock refuses this request`, `"state":"lost"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in:\n%s", want, all)
		}
	}
	if strings.Contains(all, `"state":"failed"`) || strings.Contains(all, `"state":"waiting"`) {
		t.Errorf("a reported error became a state:\n%s", all)
	}
	if os.Getenv("LCWRAP_RECORD") != "" {
		record(t, "exec-failed.jsonl", out)
	}
}

// record writes a redacted recording into testdata (LCWRAP_RECORD=1).
func record(t *testing.T, name string, data []byte) {
	t.Helper()
	data = redactRecording(data)
	if err := os.WriteFile(filepath.Join("testdata", name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	textField = regexp.MustCompile(`"text":"(?:[^"\\]|\\.){200,}"`)
	tmpPath   = regexp.MustCompile(`/tmp/[A-Za-z0-9_./-]*`)
)

// redactRecording replaces long texts (codex's instructions) and
// temporary paths, keeping every line's shape.
func redactRecording(b []byte) []byte {
	b = textField.ReplaceAll(b, []byte(`"text":"(long text removed from the recording)"`))
	return tmpPath.ReplaceAllFunc(b, func(p []byte) []byte { return []byte("/tmp/rec") })
}
