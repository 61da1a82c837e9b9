package claudecode

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

func otlpRecorded(t testing.TB) [][]byte {
	files, _ := filepath.Glob("testdata/otlp/*.json")
	if len(files) == 0 {
		t.Fatal("no recorded OTLP payloads")
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestParseLogs reads the payloads claude 2.1.332 sent (recorded), and
// the int64-as-string form of protobuf's JSON mapping.
func TestParseLogs(t *testing.T) {
	var api, dec int
	for _, b := range otlpRecorded(t) {
		recs, _, ok := ParseLogs(b)
		if !ok {
			t.Fatal("a recorded payload read as unreadable")
		}
		for _, r := range recs {
			switch r.Event {
			case "api_request":
				api++
				if r.Session == "" || r.Input != 12 || r.Output != 6 || r.CostUSD <= 0 || r.Model == "" || len(r.TraceID) != 32 {
					t.Fatalf("api_request %+v", r)
				}
			case "tool_decision":
				dec++
				if r.Decision != "accept" || r.DecisionSource != "config" || r.Tool == "" || r.ToolUseID == "" {
					t.Fatalf("tool_decision %+v", r)
				}
			}
		}
	}
	if api == 0 || dec == 0 {
		t.Fatalf("%d requests, %d decisions", api, dec)
	}
	recs, other, ok := ParseLogs([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[
		{"body":{"stringValue":"claude_code.api_request"},"attributes":[{"key":"session.id","value":{"stringValue":"s"}},{"key":"input_tokens","value":{"intValue":"1200"}},{"key":"output_tokens","value":{"intValue":-3}},{"key":"cost_usd","value":{"doubleValue":0.5}}]},
		{"body":{"stringValue":"claude_code.api_request"},"attributes":[]},
		{"body":{"stringValue":"claude_code.user_prompt"},"attributes":[{"key":"session.id","value":{"stringValue":"s"}}]}]}]}]}`))
	if !ok || len(recs) != 1 || other != 2 || recs[0].Input != 1200 || recs[0].Output != 0 || recs[0].CostUSD != 0.5 {
		t.Fatalf("%+v %d %v", recs, other, ok)
	}
	for _, bad := range []string{``, `not json`, "{\"resourceLogs\":\"\xff\"}", `[1,2]`} {
		if _, _, ok := ParseLogs([]byte(bad)); ok && bad != `[1,2]` {
			t.Errorf("ParseLogs(%q) read it", bad)
		}
	}
}

func FuzzParseLogs(f *testing.F) {
	for _, b := range otlpRecorded(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"claude_code.api_request"},"attributes":[{"key":"session.id","value":{"stringValue":"s"}},{"key":"input_tokens","value":{"intValue":"9223372036854775807"}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, other, ok := ParseLogs(b)
		if !ok && (recs != nil || other != 0) {
			t.Fatal("an unreadable payload gave records")
		}
		for _, r := range recs {
			if r.Session == "" || r.Input < 0 || r.Output < 0 || r.CacheRead < 0 || r.CacheCreation < 0 || r.CostUSD < 0 || r.CostUSD >= 1e12 {
				t.Fatalf("record %+v", r)
			}
		}
	})
}

func TestTraceParent(t *testing.T) {
	v, id, from, add := traceParent(nil)
	if got, ok := traceIDOf(v); !ok || got != id || from != "lcwrap" || !add {
		t.Fatalf("new trace %q %q %q %v", v, id, from, add)
	}
	v2, id2, _, _ := traceParent(nil)
	if v2 == v || id2 == id {
		t.Fatal("two runs share a trace")
	}
	user := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if v, id, from, add := traceParent([]string{"TRACEPARENT=" + user}); v != user || id != "4bf92f3577b34da6a3ce929d0e0e4736" || from != "user" || add {
		t.Fatalf("user's trace: %q %q %q %v", v, id, from, add)
	}
	for _, bad := range []string{"", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f35-00f067aa0ba902b7-01"} {
		if _, _, from, _ := traceParent([]string{"TRACEPARENT=" + bad}); from != "lcwrap" {
			t.Errorf("invalid TRACEPARENT %q taken as the parent", bad)
		}
	}
}

// TestUserOTLPLeftAlone: a caller who exports Claude Code's telemetry
// keeps it: lcwrap adds none of its OTLP settings, serves no /v1/logs,
// and says once that cost and decisions are unknown.
func TestUserOTLPLeftAlone(t *testing.T) {
	defer func(f func() []string) { environ = f }(environ)
	for _, user := range []bool{false, true} {
		environ = func() []string {
			if user {
				return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318"}
			}
			return nil
		}
		r, err := Driver{Exe: "/bin/lcwrap"}.Prepare(context.Background(), agent.Launch{Argv: []string{"claude", "-p", "hi"}, ChildID: "claude-abcd1234"})
		if err != nil {
			t.Fatal(err)
		}
		c := r.Command()
		env := strings.Join(c.Env, "\n")
		warned := strings.Count(strings.Join(c.Warnings, "\n"), "unknown to it")
		switch {
		case user && (strings.Contains(env, "OTEL_") || strings.Contains(env, "CLAUDE_CODE_ENABLE_TELEMETRY") || warned != 1):
			t.Errorf("user's OTLP: env %q, warnings %q", c.Env, c.Warnings)
		case !user && (!strings.Contains(env, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://127.0.0.1:") || !strings.Contains(env, "TRACEPARENT=00-") || warned != 0):
			t.Errorf("no OTLP of the user's: env %q, warnings %q", c.Env, c.Warnings)
		}
		if c.Added == nil || len(c.Added.TraceID) != 32 {
			t.Errorf("trace id not recorded: %+v", c.Added)
		}
		r.Close()
	}
}

// TestTelemetryQueueDrops: a full queue drops payloads with a count and
// never blocks the server's handler.
func TestTelemetryQueueDrops(t *testing.T) {
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	q := &telemetry{totals: map[usageKey]*agent.AgentTotals{}}
	q.in = emit.NewQueue(2, nil, true, func([][]byte) error {
		once.Do(func() { close(entered); <-gate }) // the reader is stuck on the first
		return nil
	})
	q.put([]byte("{}"))
	<-entered
	start := time.Now()
	for range 4 {
		q.put([]byte("{}"))
	}
	if d := q.in.Dropped(); d != 2 {
		t.Fatalf("dropped %d, want 2", d)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("put blocked")
	}
	close(gate)
	q.close()
}

// BenchmarkOTLPPost is one recorded OTLP payload posted to the run's
// hook server over a kept-alive connection, as Claude Code's exporter
// sends it, up to its queue: the server's path, answered before the
// payload is read (compare BenchmarkHookPost, the hook path; the reading,
// off that path, is BenchmarkOTLPRead).
func BenchmarkOTLPPost(b *testing.B) {
	bench(b, OTLPPath, otlpRecorded(b)[2])
}

// BenchmarkHookPost is one recorded hook payload on the same server.
func BenchmarkHookPost(b *testing.B) {
	body, err := os.ReadFile("testdata/hooks/03-PreToolUse.json")
	if err != nil {
		b.Fatal(err)
	}
	bench(b, hookhttp.HookPath, body)
}

func bench(b *testing.B, path string, body []byte) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Emitter: emit.New(emit.Options{Source: Source}, discard{})})
	q := newPayloads(tr)
	tel := &telemetry{} // the queue is drained, not read: the server's path alone
	tel.in = emit.NewQueue(MaxTelemetryQueue, nil, true, func([][]byte) error { return nil })
	defer tel.close()
	srv := hookhttp.ServeRoutes(ln, "tok", hookhttp.Routes{hookhttp.HookPath: q.put, OTLPPath: tel.put}, nil)
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		b.Fatal(err)
	}
	req := []byte("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Lcwrap-Token: tok\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n")
	req = append(req, body...)
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(body)))
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		n, err := c.Read(buf)
		if err != nil || !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 200")) {
			b.Fatalf("%v %q", err, buf[:n])
		}
	}
	c.Close()
	srv.Close(time.Second)
	q.close()
	tel.close()
}

type discard struct{}

func (discard) Name() string                          { return "discard" }
func (discard) WriteEvent(*event.Event, []byte) error { return nil }
func (discard) Close() error                          { return nil }

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkOTLPRead is the reader's side of one recorded payload: parsed,
// added to the totals, and its events written (to a sink that discards).
func BenchmarkOTLPRead(b *testing.B) {
	body := otlpRecorded(b)[2]
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Emitter: emit.New(emit.Options{Source: Source}, discard{})})
	var recs []Telemetry
	recs, _, _ = ParseLogs(body)
	tr.Apply(agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: recs[0].Session, Native: "SessionStart"}))
	q := &telemetry{totals: map[usageKey]*agent.AgentTotals{}}
	q.in = emit.NewQueue(1, nil, true, func([][]byte) error { return nil }) // read directly, not through it
	defer q.close()
	b.SetBytes(int64(len(body)))
	defer cpuPerOp(b)()
	for b.Loop() {
		q.read(tr, body)
	}
}

// cpuPerOp reports the process's CPU time (user and system) per op: on a
// machine shared with other work, wall time per op says more about the
// load than about the code.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64((cpu()-start).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}
