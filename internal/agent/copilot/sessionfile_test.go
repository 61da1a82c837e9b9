package copilot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

const recordedTUIFile = "testdata/session-state/tui-events.jsonl"

func recordedLines(t testing.TB) [][]byte {
	b, err := os.ReadFile(recordedTUIFile)
	if err != nil {
		t.Fatal(err)
	}
	var ls [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, MaxSessionLine)
	for sc.Scan() {
		ls = append(ls, append([]byte(nil), sc.Bytes()...))
	}
	return ls
}

// TestParseRecordedSessionFile: of the recorded TUI session's lines, the
// permission request is a wait for permission naming the command, its
// answer Copilot's decision and who made it; the others are not read.
func TestParseRecordedSessionFile(t *testing.T) {
	var got []string
	for _, l := range recordedLines(t) {
		o, ok := ParseSessionLine("s", l)
		if !ok {
			continue
		}
		s := string(o.Kind) + " " + string(o.WaitingFor) + " " + o.Summary
		if o.Decision != nil {
			s += " | " + o.Decision.Decision + " " + o.Decision.Source + " " + o.Decision.ToolUseID
		}
		got = append(got, s)
	}
	want := []string{
		"waiting permission shell: echo lcwrap-mock-ok > lcwrap-mock.txt",
		"working  permission approved, decided by human_response | approved human_response call_1_0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSessionFileWait: the wrapper follows the session file its
// sessionStart hook names; the permission prompt's notification hook and
// the file's permission.requested are one wait, recorded once; the
// file's permission.completed ends it with who answered.
func TestSessionFileWait(t *testing.T) {
	home := t.TempDir()
	session := "63613808-0a74-442e-ba99-02acb7d03a5f"
	path := SessionFile(home, session)
	os.MkdirAll(filepath.Dir(path), 0o700)
	lines := recordedLines(t)
	write := func(ls ...[]byte) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			f.Write(append(append([]byte(nil), l...), '\n'))
		}
		f.Close()
	}
	write(lines[0], lines[1]) // session.start, tool.execution_start
	tr, sink := newTracker(t)
	fol := newFollower(tr, home)
	r := &relay{fol: fol}
	hook := func(name string) {
		raw, err := os.ReadFile(filepath.Join("testdata", "tui", name))
		if err != nil {
			t.Fatal(err)
		}
		ev := strings.TrimSuffix(name[3:], ".json")
		if out := r.normalize(Wrap(ev, raw)); len(out.Observations) > 0 || out.Ignored != "" {
			t.Fatalf("%s: an outcome was left to the hook server: %+v", name, out)
		}
	}
	hook("01-sessionStart.json")
	hook("02-userPromptSubmitted.json")
	testtool.Eventually(t, "the session file followed", func() bool {
		fol.mu.Lock()
		defer fol.mu.Unlock()
		return fol.followed[session] != nil && fol.followed[session].open
	})
	write(lines[2]) // permission.requested
	sess := "cp-63613808-r"
	waiting := func() bool {
		for _, s := range sink.Of(sess) {
			if s == "state_changed waiting" {
				return true
			}
		}
		return false
	}
	testtool.Eventually(t, "the wait from the file", waiting)
	hook("05-notification.json") // the same wait, said by the hook
	write(lines[3])              // permission.completed
	testtool.Eventually(t, "running again", func() bool {
		of := sink.Of(sess)
		return of[len(of)-1] == "activity permission approved, decided by human_response"
	})
	hook("06-postToolUse.json")
	hook("07-agentStop.json")
	hook("08-sessionEnd.json")
	fol.close()
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	got := strings.Join(sink.Of(sess), "\n") + "\n"
	want := "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
		"state_changed waiting\nactivity waiting for permission: shell: echo lcwrap-mock-ok > lcwrap-mock.txt\n" +
		"state_changed running\nactivity permission approved, decided by human_response\n" +
		"activity bash done\nstate_changed waiting\nactivity turn ended; waiting for the user\ndiagnostic\nterminal completed\n"
	if got != want {
		t.Errorf("session:\n%s\nwant:\n%s", got, want)
	}
	for _, ev := range sink.Events() {
		if ev.Kind == event.KindDiagnostic && !strings.Contains(string(ev.Details), "permission_prompt: the wait is read from the session file") {
			t.Errorf("the session's counts do not name the second source: %s", ev.Details)
		}
		if ev.Kind == event.KindStateChanged && ev.State == event.StateRunning && strings.Contains(string(ev.Details), NativeCompleted) {
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			if d.Decision == nil || d.Decision.Source != "human_response" || d.Decision.Decision != "approved" {
				t.Errorf("the answer's details: %s", ev.Details)
			}
		}
		if ev.Kind == event.KindStateChanged && ev.State == event.StateWaiting && strings.Contains(string(ev.Details), NativeRequested) {
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			if d.WaitingFor != string(event.WaitPermission) {
				t.Errorf("the wait's details: %s", ev.Details)
			}
		}
	}
}

// TestSessionFileResumed: a resumed session's file is read from its end
// (its old waits are not this run's).
func TestSessionFileResumed(t *testing.T) {
	home := t.TempDir()
	session := "63613808-0a74-442e-ba99-02acb7d03a5f"
	path := SessionFile(home, session)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, bytes.Join(recordedLines(t), []byte("\n")), 0o600)
	tr, sink := newTracker(t)
	fol := newFollower(tr, home)
	fol.apply(agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: session, Source: "resume"}))
	time.Sleep(3 * pollEvery) // nothing may come: there is no event to wait for
	fol.close()
	if strings.Contains(sink.Summaries(), "waiting") {
		t.Errorf("an old wait was read:\n%s", sink.Summaries())
	}
}

func TestSessionFilePaths(t *testing.T) {
	if SessionFile("/h", "../x") != "" || SessionFile("", "x") != "" {
		t.Error("an unsafe path")
	}
	if got := SessionFile("/h/.copilot", "abc-1"); got != "/h/.copilot/session-state/abc-1/events.jsonl" {
		t.Error(got)
	}
	if CopilotHome("", "/home/u") != "/home/u/.copilot" || CopilotHome("/c", "/home/u") != "/c" || CopilotHome("", "") != "" {
		t.Error("CopilotHome")
	}
}

func TestLineReader(t *testing.T) {
	f := filepath.Join(t.TempDir(), "e.jsonl")
	long := strings.Repeat("x", MaxSessionLine+10)
	os.WriteFile(f, []byte("a\n"+long+"\nb\nc"), 0o600)
	fh, _ := os.Open(f)
	defer fh.Close()
	r := &lineReader{f: fh}
	var got []string
	for {
		l, err := r.next()
		if err != nil {
			break
		}
		got = append(got, string(l))
	}
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("%d lines, the first %.20q", len(got), got)
	}
	os.WriteFile(f, []byte("a\n"+long+"\nb\nc\n"), 0o600)
	if l, err := r.next(); err != nil || string(l) != "c" {
		t.Errorf("the line once ended: %q %v", l, err)
	}
}

func FuzzParseSessionLine(f *testing.F) {
	testtool.SeedLines(f, "testdata/session-state/*.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		o, ok := ParseSessionLine("s", b)
		if !ok {
			return
		}
		if o.Session != "s" || o.Kind != agent.Waiting && o.Kind != agent.Working && o.Kind != agent.UsageReported || o.Kind == agent.Waiting && o.WaitingFor != event.WaitPermission {
			t.Fatalf("%q: %+v", b, o)
		}
		if u := o.Usage; o.Kind == agent.UsageReported && (u == nil || u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || !u.CostUnknown) {
			t.Fatalf("%q: usage %+v", b, u)
		}
		tr, sink := newTracker(t)
		tr.Apply(agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: "s"}))
		tr.Apply(agent.Observe(o))
		tr.End(agent.ProcessEnd{ChildID: "p"})
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("%q: %v", b, errs)
		}
		sink.Check(t)
	})
}

// BenchmarkSessionLine is one recorded session file line as the wrapper
// pays for it, in a session already open: the permission request (parsed
// and recorded by the Tracker, into a capture) and its answer, in turn.
func BenchmarkSessionLine(b *testing.B) {
	tr, _ := newTracker(b)
	tr.Apply(agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: "s"}))
	lines := recordedLines(b)
	req, done := lines[2], lines[3]
	b.SetBytes(int64(len(req)+len(done)) / 2)
	i := 0
	for b.Loop() {
		l := req
		if i%2 == 1 {
			l = done
		}
		i++
		if o, ok := ParseSessionLine("s", l); ok {
			tr.Apply(agent.Observe(o))
		}
	}
}

// BenchmarkStreamLine is one recorded line of --output-format json (a
// tool call's start, which names no session: read and left) as the
// wrapper pays for it passing through.
func BenchmarkStreamLine(b *testing.B) {
	s := NewStream()
	var line []byte
	for _, l := range bytes.Split(mustRead(b, "testdata/stream/bash.jsonl"), []byte("\n")) {
		if bytes.Contains(l, []byte(`"tool.execution_start"`)) {
			line = append(l, '\n')
		}
	}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		s.Write(line)
	}
}

func mustRead(b testing.TB, path string) []byte {
	r, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// TestSessionFileUsage: the recorded headless run's four usage records
// (the session's and its sub-agent's requests, 10 prompt and 5 completion
// tokens each from the mock) are Copilot's running totals for the
// session, its cost unknown (its cost field, 0 under
// bring-your-own-model, is not read).
func TestSessionFileUsage(t *testing.T) {
	home := t.TempDir()
	session := "12802e10-2a02-4d37-b523-a3c976699408"
	path := SessionFile(home, session)
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, mustRead(t, "testdata/session-state/agent-usage.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t)
	fol := newFollower(tr, home)
	fol.apply(agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: session, Source: "new"}))
	fol.close()
	tr.End(agent.ProcessEnd{ChildID: "p"})
	var last *agent.AgentTotals
	n := 0
	for _, ev := range sink.Events() {
		var d struct {
			Usage *agent.AgentTotals `json:"agentUsage"`
		}
		if json.Unmarshal(ev.Details, &d) == nil && d.Usage != nil {
			last, n = d.Usage, n+1
		}
	}
	want := agent.AgentTotals{Requests: 4, Input: 40, Output: 20, Model: "gpt-4.1", CostUnknown: true, ReportedBy: "copilot", Via: ViaUsage}
	if n != 4 || last == nil || *last != want {
		t.Errorf("%d totals, the last %+v, want %+v", n, last, want)
	}
}
