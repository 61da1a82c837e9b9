package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// TestHookServer: a payload with the run's token is normalized and
// recorded before Close returns; one without is refused and counted in
// the terminal event.
func TestHookServer(t *testing.T) {
	tr, sink := newTracker(t, Config{Source: "x", Prefix: "x", Parent: "p", RunTag: "r"})
	h, err := StartHookServer(tr, func(b []byte) Outcome {
		return Observe(Observation{Kind: SessionStarted, Session: string(b), Native: "test"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.URL, "http://127.0.0.1:") || len(h.Env()) != 2 {
		t.Fatalf("%s %v", h.URL, h.Env())
	}
	if err := hookhttp.Post(h.URL, h.Token, []byte("s1"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := hookhttp.Post(h.URL, "wrong", []byte("s2"), 5*time.Second); err == nil {
		t.Fatal("a request with the wrong token was taken")
	}
	h.Close()
	h.Close() // once
	if got := sink.Summaries(); got != "created created\nstate_changed starting\n" {
		t.Errorf("events:\n%s", got)
	}
	var term event.Terminal
	h.Report(&term)
	b, _ := json.Marshal(term.Extra)
	if !bytes.Contains(b, []byte(KeyHookRequestsRejected)) {
		t.Errorf("refused request not counted: %s", b)
	}
}

// TestLineTap: whole lines in any pieces, a line over MaxLine skipped and
// counted, the unterminated last line passed on at Flush.
func TestLineTap(t *testing.T) {
	var got []string
	l := NewLineTap(func(b []byte) { got = append(got, string(b)) })
	in := "a\nbc\n" + strings.Repeat("x", MaxLine+1) + "\nd\ne"
	for len(in) > 0 {
		n := min(len(in), 1<<20+7)
		l.Write([]byte(in[:n]))
		in = in[n:]
	}
	if n := l.Flush(); n != 1 {
		t.Errorf("skipped %d, want 1", n)
	}
	if strings.Join(got, ",") != "a,bc,d,e" {
		t.Errorf("lines %q", got)
	}
}
