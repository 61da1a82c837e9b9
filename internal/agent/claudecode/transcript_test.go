package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// The lines Claude Code 2.1.332 wrote when Esc interrupted a Bash call,
// and a plain turn, as recorded (the ids shortened).
const (
	interruptedToolUse = `{"parentUuid":"562a","isSidechain":false,"promptId":"d37a","type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]},"rowSource":"harness","uuid":"af97","timestamp":"2026-12-01T18:13:30.636Z","interruptedMessageId":"msg_mock0001","sessionId":"54ee"}`
	interruptedTurn    = `{"isSidechain":false,"type":"user","message":{"role":"user","content":"[Request interrupted by user]"},"sessionId":"54ee"}`
	rejectedToolResult = `{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"The user doesn't want to proceed with this tool use.","is_error":true,"tool_use_id":"toolu_mock0001"}]},"toolUseResult":"User rejected tool use"}`
)

func TestInterruption(t *testing.T) {
	for line, want := range map[string]string{
		interruptedToolUse: "[Request interrupted by user for tool use]",
		interruptedTurn:    "[Request interrupted by user]",
		rejectedToolResult: "",
		// A prompt that quotes the marker is the user's text, not an
		// interruption; so is a sub-agent's side chain.
		`{"type":"user","message":{"content":"why does it say [Request interrupted by user] here?"}}`:         "",
		`{"type":"user","isSidechain":true,"message":{"content":"[Request interrupted by user]"}}`:            "",
		`{"type":"assistant","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}`: "",
		`[Request interrupted by user]`: "",
		``:                              "",
	} {
		if got := Interruption([]byte(line)); got != want {
			t.Errorf("Interruption(%s) = %q, want %q", line, got, want)
		}
	}
}

func FuzzInterruption(f *testing.F) {
	for _, s := range []string{interruptedToolUse, interruptedTurn, rejectedToolResult, `{"type":"user","message":{"content":[null]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m := Interruption(line)
		if m != "" && (len(m) > 80 || m[0] != '[') {
			t.Fatalf("Interruption(%q) = %q", line, m)
		}
	})
}

// TestTranscriptFollower: a transcript is read from its end when first
// named (an earlier interruption is not this run's), then line by line as
// it grows, a line split across two looks included.
func TestTranscriptFollower(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(interruptedTurn+"\n"), 0o600)
	var ts transcripts
	ts.see("s", path)
	if obs := ts.read("s"); len(obs) != 0 {
		t.Fatalf("read the transcript's past: %+v", obs)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	defer f.Close()
	f.WriteString(rejectedToolResult + "\n" + interruptedToolUse[:40])
	if obs := ts.read("s"); len(obs) != 0 {
		t.Fatalf("half a line: %+v", obs)
	}
	f.WriteString(interruptedToolUse[40:] + "\n")
	obs := ts.read("s")
	if len(obs) != 1 || obs[0].Kind != agent.Waiting || obs[0].WaitingFor != event.WaitUser || obs[0].Native != "transcript: [Request interrupted by user for tool use]" {
		t.Fatalf("observations %+v", obs)
	}
	if obs := ts.read("s"); len(obs) != 0 {
		t.Fatalf("read twice: %+v", obs)
	}
	if obs := ts.read("unknown"); obs != nil {
		t.Fatalf("a session never named: %+v", obs)
	}
}
