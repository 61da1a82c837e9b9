package codex

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// TestPrepareRuns: each mode's run has exactly the seams it needs (exec
// --json reads stdout, the TUI needs the started identity, the others
// neither), and none changes the command.
func TestPrepareRuns(t *testing.T) {
	for _, tc := range []struct {
		argv            string
		stdout, starter bool
	}{
		{"codex exec --json fix", true, false},
		{"codex", false, true},
		{"node /x/codex.js resume", false, true},
		{"codex login", false, false},
		{"codex exec fix", false, false},
	} {
		argv := strings.Fields(tc.argv)
		r, err := Driver{}.Prepare(context.Background(), agent.Launch{Argv: argv, ChildID: "codex-1a2b3c4d"})
		if err != nil {
			t.Fatalf("%s: %v", tc.argv, err)
		}
		_, starter := r.(agent.Starter)
		if (r.Stdout() != nil) != tc.stdout || starter != tc.starter {
			t.Errorf("%s: stdout %v, starter %v", tc.argv, r.Stdout() != nil, starter)
		}
		if c := r.Command(); !slices.Equal(c.Argv, argv) || c.Recorded != nil || c.Env != nil || c.Added != nil {
			t.Errorf("%s: the command changed: %+v", tc.argv, c)
		}
		r.Close()
		var term event.Terminal
		r.Report(&term)
		if sessions, ok := event.Get[agent.AgentSessions](term.Extra, agent.KeyAgentSessions); ok {
			t.Errorf("%s: sessions without evidence: %+v", tc.argv, sessions)
		}
	}
}

// TestAdoptShapes: a process that is not codex is not its agent; the
// shapes codex does not follow say so.
func TestAdoptShapes(t *testing.T) {
	ctx := context.Background()
	if _, err := (Driver{}).Adopt(ctx, agent.AdoptRequest{Target: agent.PIDTarget{Name: "sh", Argv: []string{"sh"}, Named: true}}); !errors.Is(err, agent.ErrNotAgent) {
		t.Errorf("sh: %v", err)
	}
	if _, err := (Driver{}).Adopt(ctx, agent.AdoptRequest{Target: agent.PIDTarget{Name: "codex", Argv: []string{"codex", "login"}}}); !errors.Is(err, agent.ErrNotAgent) {
		t.Errorf("codex login: %v", err)
	}
	for _, tg := range []agent.Target{agent.RegistryTarget{}, agent.ServerTarget{URL: "http://127.0.0.1:1"}} {
		a, err := (Driver{}).Adopt(ctx, agent.AdoptRequest{Target: tg})
		if a != nil || !errors.Is(err, agent.ErrNotSupported) {
			t.Errorf("%T: %v, %v", tg, a, err)
		}
	}
}
