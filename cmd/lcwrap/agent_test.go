package main

import (
	"context"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// TestAgentByName: the name table that spares a plain run the agent
// packages picks exactly the driver whose Recognize accepts the command,
// as asking every driver would.
func TestAgentByName(t *testing.T) {
	names := agentNames()[2:]
	for _, argv := range [][]string{
		{"claude"}, {"claude", "-p", "x"}, {"/usr/local/bin/claude", "--resume"}, {"./claude"},
		{"codex"}, {"codex", "exec", "--json", "x"}, {"/opt/codex.js"}, {"node", "/usr/lib/node_modules/@openai/codex/bin/codex.js", "exec"},
		{"nodejs", "codex"}, {"node", "/x/claude"}, {"node"}, {"node", "server.js"},
		{"sh", "-c", "exit 3"}, {"make", "test"}, {"claude-code"}, {"codex-cli"}, {"Claude"}, {""}, {},
	} {
		var want agent.Driver
		for _, n := range names {
			if d := agentDriver(n); d.Recognize(argv) {
				want = d
				break
			}
		}
		got, ok := selectAgent(agentAuto, argv)
		if !ok || got != want {
			t.Errorf("selectAgent(auto, %q) = %v, %v; want %v", argv, got, ok, want)
		}
		if got, _ := selectAgent(agentNone, argv); got != nil {
			t.Errorf("--agent none chose %v for %q", got, argv)
		}
	}
	for _, n := range names {
		if d, ok := selectAgent(n, []string{"sh"}); !ok || d == nil || d.Name() != n {
			t.Errorf("--agent %s chose %v, %v", n, d, ok)
		}
	}
	if _, ok := selectAgent("nosuch", []string{"claude"}); ok {
		t.Error("--agent nosuch was accepted")
	}
}

// fakeAdoption records how it was ended.
type fakeAdoption struct {
	done  chan struct{}
	ended chan bool
}

func (a *fakeAdoption) Done() <-chan struct{} { return a.done }
func (a *fakeAdoption) End(gone bool)         { a.ended <- gone }

// TestFollowAdoption: an adoption that ends by itself ends gone; one
// whose observation stops is left as it is.
func TestFollowAdoption(t *testing.T) {
	a := &fakeAdoption{done: make(chan struct{}), ended: make(chan bool, 1)}
	close(a.done)
	followAdoption(context.Background(), a)
	if gone := <-a.ended; !gone {
		t.Error("an adoption that ended by itself was not ended as gone")
	}

	a = &fakeAdoption{ended: make(chan bool, 1)} // Done nil: never by itself
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	followAdoption(ctx, a)
	if gone := <-a.ended; gone {
		t.Error("an adoption whose observation stopped was ended as gone")
	}
}
