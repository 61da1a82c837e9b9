package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// logsPayload is an OTLP/HTTP JSON payload shaped as Gemini CLI 0.61.0's
// exporter writes it (its event.name attributes, a sentence as body):
// a request, two responses (one intValue as a string, as protobuf's JSON
// mapping may write it) and a tool call the user accepted.
func logsPayload(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "otlp", "logs.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseTelemetry(t *testing.T) {
	recs, ok := ParseTelemetry(logsPayload(t))
	if !ok || len(recs) != 3 {
		t.Fatalf("ok %v, %d records: %+v", ok, len(recs), recs)
	}
	want := []Telemetry{
		{Event: "api_response", Session: "s1", Model: "gemini-2.5-flash", Input: 10, Output: 5, Cached: 2},
		{Event: "tool_call", Session: "s1", Tool: "run_shell_command", Decision: "accept", ToolCallOK: true},
		{Event: "api_response", Session: "s1", Model: "gemini-2.5-flash", Input: 20, Output: 7},
	}
	for i := range want {
		if recs[i] != want[i] {
			t.Errorf("record %d: %+v, want %+v", i, recs[i], want[i])
		}
	}
	for _, bad := range []string{"", "{", "\xff", `{"resourceLogs":"gemini_cli.tool_call"}`} {
		if _, ok := ParseTelemetry([]byte(bad)); ok {
			t.Errorf("%q read as a payload", bad)
		}
	}
	if recs, ok := ParseTelemetry([]byte(`{"resourceLogs":[]}`)); !ok || recs != nil {
		t.Errorf("an empty payload: %v %v", recs, ok)
	}
	// A record without a session is left aside, never guessed.
	noSession := strings.ReplaceAll(string(logsPayload(t)), `"session.id"`, `"other.id"`)
	if recs, ok := ParseTelemetry([]byte(noSession)); !ok || len(recs) != 0 {
		t.Errorf("records without a session: %+v %v", recs, ok)
	}
}

// TestRecordedTelemetry reads the records of one real TUI run (0.61.0
// against geminimock: three model requests and responses of 10 prompt and
// 5 candidate tokens each, one shell call the user allowed once).
func TestRecordedTelemetry(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "otlp", "tui-recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	recs, ok := ParseTelemetry(b)
	if !ok {
		t.Fatal("not read")
	}
	var responses, decisions int
	for _, r := range recs {
		if r.Agent != "" {
			t.Errorf("the session's own record (prompt_id <session>########N) named a sub-agent: %+v", r)
		}
		switch {
		case r.Event == "api_response" && r.Input == 10 && r.Output == 5 && r.Model == "gemini-2.5-flash":
			responses++
		case r.Event == "tool_call" && r.Decision == "accept" && r.Tool == "run_shell_command" && r.ToolCallOK:
			decisions++
		default:
			t.Errorf("record %+v", r)
		}
	}
	if responses != 3 || decisions != 1 {
		t.Errorf("%d responses, %d decisions: %+v", responses, decisions, recs)
	}
}

// TestTelemetryTotals: the responses become Gemini's running totals for
// its session, attributed, with no cost; the decision an activity line
// that says Gemini does not name who decided.
func TestTelemetryTotals(t *testing.T) {
	tr, sink := newTracker(t)
	q := newTelemetry(tr, nil)
	q.put(logsPayload(t))
	q.put([]byte("not json"))
	q.close()
	if q.nRead != 1 || q.unreadable != 1 {
		t.Errorf("read %d, unreadable %d", q.nRead, q.unreadable)
	}
	tr.End(agent.ProcessEnd{ChildID: "p"})
	var last *agent.AgentTotals
	var decision bool
	for _, ev := range sink.Events() {
		var d struct {
			Usage *agent.AgentTotals `json:"agentUsage"`
		}
		if json.Unmarshal(ev.Details, &d) == nil && d.Usage != nil {
			last = d.Usage
		}
		if strings.Contains(ev.Activity, "permission for run_shell_command: accept, decided by (gemini does not say who)") {
			decision = true
		}
	}
	want := agent.AgentTotals{Requests: 2, Input: 30, Output: 12, CacheRead: 2, Model: "gemini-2.5-flash", CostUnknown: true, ReportedBy: "gemini", Via: ViaOTLP}
	if last == nil || *last != want {
		t.Errorf("totals %+v, want %+v\n%s", last, want, sink.All())
	}
	if !decision {
		t.Errorf("no decision activity:\n%s", sink.All())
	}
}

func TestUserTelemetry(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	t.Setenv(EnvSystemDefaults, filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("GEMINI_CLI_HOME", "")
	if got := userTelemetry([]string{"-p", "x"}, []string{"PATH=/bin"}, home, cwd); got != "" && !strings.HasPrefix(got, defaultSystemDefaults) {
		t.Errorf("nothing configured: %q", got)
	}
	if got := userTelemetry([]string{"--telemetry-target=local"}, nil, home, cwd); got != "the flag --telemetry-target" {
		t.Errorf("flag: %q", got)
	}
	if got := userTelemetry(nil, []string{"GEMINI_TELEMETRY_ENABLED=false"}, home, cwd); got != "$GEMINI_TELEMETRY_ENABLED" {
		t.Errorf("env: %q", got)
	}
	os.MkdirAll(filepath.Join(cwd, ".gemini"), 0o700)
	f := filepath.Join(cwd, ".gemini", "settings.json")
	os.WriteFile(f, []byte(`{"telemetry":{"enabled":true}}`), 0o600)
	if got := userTelemetry(nil, nil, home, cwd); got != f {
		t.Errorf("workspace settings: %q", got)
	}
}

func TestTelemetryEnv(t *testing.T) {
	env := strings.Join(telemetryEnv("http://127.0.0.1:9", "tok"), "\n")
	for _, want := range []string{"GEMINI_TELEMETRY_ENABLED=true", "GEMINI_TELEMETRY_OTLP_ENDPOINT=http://127.0.0.1:9", "GEMINI_TELEMETRY_OTLP_PROTOCOL=http", "GEMINI_TELEMETRY_LOG_PROMPTS=false", "OTEL_EXPORTER_OTLP_LOGS_HEADERS=X-Lcwrap-Token=tok"} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("no %s in\n%s", want, env)
		}
	}
}

func FuzzParseTelemetry(f *testing.F) {
	testtool.SeedLines(f, "testdata/otlp/*.json")
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"gemini_cli.api_response"}},{"key":"session.id","value":{"stringValue":"s"}},{"key":"input_token_count","value":{"doubleValue":-1e300}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, ok := ParseTelemetry(b)
		if !ok && recs != nil {
			t.Fatalf("%q: records from an unreadable payload", b)
		}
		for _, r := range recs {
			if r.Session == "" || r.Input < 0 || r.Output < 0 || r.Cached < 0 {
				t.Fatalf("%q: %+v", b, r)
			}
		}
		tr, _ := newTracker(t)
		q := newTelemetry(tr, newSubagents(tr))
		q.put(b)
		q.close()
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("%q: %v", b, errs)
		}
	})
}
