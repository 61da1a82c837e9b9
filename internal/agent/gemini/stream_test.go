package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// TestRecordedStream reads a stream recorded from the real CLI (a headless
// run with one shell call): as the evidence (no hooks), and for the report.
func TestRecordedStream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "stream", "headless-shell.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t)
	s := NewStream(tr, true)
	// In pieces, as a pipe may hand them over, the last line unterminated.
	data = []byte(strings.TrimSuffix(string(data), "\n"))
	for len(data) > 0 {
		n := min(len(data), 37)
		s.Write(data[:n])
		data = data[n:]
	}
	s.Flush()
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	want := "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
		"activity run_shell_command: echo lcwrap-mock-ok > lcwrap-mock.txt\nactivity run_shell_command done\n" +
		"activity result (success)\ndiagnostic\nterminal lost\n"
	if got := sink.Summaries(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	r := s.Report()
	if r == nil || r.ReportedBy != "gemini" || r.Subtype != "success" || *r.IsError || r.Results != 1 ||
		r.Usage == nil || *r.Usage.Input != 30 || *r.Usage.Output != 15 || *r.Usage.CacheRead != 0 || *r.DurationMs != 4142 ||
		r.SessionID != "f318757c-1c6a-4844-b045-72b9fb0463bd" {
		t.Errorf("report: %+v", r)
	}
}

// TestStreamReportOnly: with hooks the stream is read for the report
// alone.
func TestStreamReportOnly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "stream", "headless-shell-hooks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t)
	s := NewStream(tr, false)
	s.Write(data)
	s.Flush()
	if got := sink.Summaries(); got != "" {
		t.Errorf("events from a report-only stream:\n%s", got)
	}
	if r := s.Report(); r == nil || r.Subtype != "success" {
		t.Errorf("report: %+v", r)
	}
}

// TestStreamLines maps each line type, and what it does not know.
func TestStreamLines(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"type":"init","session_id":"s","model":"m"}`, "session-started"},
		{`{"type":"init"}`, "unrecognized:(init without session_id)"},
		{`{"type":"message","role":"user","content":"secret"}`, "prompt-submitted"},
		{`{"type":"message","role":"assistant","content":"secret"}`, "ignored:"},
		{`{"type":"tool_use","tool_name":"run_shell_command","parameters":{"command":"ls"}}`, "tool-started"},
		{`{"type":"tool_result","status":"error","output":"secret"}`, "tool-failed"},
		{`{"type":"error","severity":"warning","message":"m"}`, "error-reported"},
		{`{"type":"result","status":"error"}`, "note"},
		{`{"type":"brand_new"}`, "unrecognized:stream-json brand_new"},
		{`nope`, "unrecognized:(stream-json line that is not a JSON object)"},
	} {
		out, _ := ParseStreamLine([]byte(c.line), "s")
		var got string
		switch {
		case out.Unrecognized != "":
			got = "unrecognized:" + out.Unrecognized
		case out.Ignored != "":
			got = "ignored:"
		case len(out.Observations) == 1:
			got = string(out.Observations[0].Kind)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.line, got, c.want)
		}
	}
}

// FuzzParseStreamLine: no line panics or makes an event that cannot be
// written.
func FuzzParseStreamLine(f *testing.F) {
	testtool.SeedLines(f, "testdata/stream/*.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _ := ParseStreamLine(b, "s")
		tr, _ := newTracker(t)
		tr.Apply(out)
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("%q: %v", b, errs)
		}
	})
}

// BenchmarkStreamLine is one recorded stream-json line (a tool call) as
// the wrapper pays for it: split from the stream, parsed, and recorded by
// the Tracker (into a capture), in a session already open.
func BenchmarkStreamLine(b *testing.B) {
	tr, _ := newTracker(b)
	s := NewStream(tr, true)
	s.Write([]byte(`{"type":"init","session_id":"bench","model":"m"}` + "\n"))
	line := []byte(`{"type":"tool_use","timestamp":"2026-12-01T18:15:28.699Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"echo lcwrap-mock-ok > lcwrap-mock.txt","description":"lcwrap mock"}}` + "\n")
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		s.Write(line)
	}
}
