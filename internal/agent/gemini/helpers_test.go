package gemini

import (
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/eventcap"
)

func newTracker(t testing.TB) (*agent.Tracker, *eventcap.Sink) {
	t.Helper()
	sink := &eventcap.Sink{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Parent: "p", RunTag: "r",
		Emitter: emit.New(emit.Options{Source: Source}, sink)})
	return tr, sink
}
