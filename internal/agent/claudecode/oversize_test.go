package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// TestOversizedHookRefusedAlone: one hook payload with a 64 KB session id
// is refused alone; the hooks after it, the session's terminal event
// included, reach the journal (issue 23 item 4).
func TestOversizedHookRefusedAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journal.Open(path, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := emit.New(emit.Options{}, emit.NewJournalSink(j))
	d := Driver{Exe: "/usr/bin/lcwrap", Dir: t.TempDir()}
	r, err := d.Prepare(context.Background(), agent.Launch{Argv: []string{"claude", "-p", "x"}, ChildID: "claude-1a2b3c4d"})
	if err != nil {
		t.Fatal(err)
	}
	r.Attach(e)
	var url, tok string
	for _, kv := range r.Command().Env {
		if v, ok := strings.CutPrefix(kv, EnvHookURL+"="); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(kv, EnvHookToken+"="); ok {
			tok = v
		}
	}
	post := func(body string) {
		t.Helper()
		if err := hookhttp.Post(url, tok, []byte(body), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("s", 64<<10)
	post(fmt.Sprintf(`{"hook_event_name":"SessionStart","session_id":%q,"source":"startup"}`, big))
	post(`{"hook_event_name":"SessionStart","session_id":"good-session","source":"startup"}`)
	post(`{"hook_event_name":"UserPromptSubmit","session_id":"good-session"}`)
	post(`{"hook_event_name":"SessionEnd","session_id":"good-session","reason":"exit"}`)
	r.Close()
	var term event.Terminal
	r.Report(&term)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if errs := e.SinkErrors(); len(errs) > 0 {
		t.Errorf("sink errors: %v", errs)
	}
	var terminal bool
	err = journal.Scan(path, 0, func(rec event.Record, raw []byte) error {
		if strings.HasPrefix(rec.Event.ChildID, "cc-good-ses") && rec.Event.Kind == event.KindTerminal && rec.Event.State == event.StateCompleted {
			terminal = true
		}
		return nil
	})
	if b, _ := os.ReadFile(path); !terminal {
		t.Logf("%.2000s", b)
	}
	if err != nil || !terminal {
		t.Fatalf("the good session's terminal event is missing (scan: %v)", err)
	}
	if sessions, ok := event.Get[agent.AgentSessions](term.Extra, agent.KeyAgentSessions); !ok || len(sessions.Unattributed) == 0 {
		t.Errorf("the refused payload is not counted: %+v", term.Extra)
	}
}
