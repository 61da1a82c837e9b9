package live_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/live"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// On the wall clock a followed fleet's host falls silent when its time
// comes, with nothing written to the output (the follower then waits on
// the directory's watch, with the instant of the next silence as its
// limit), and is heard again when a line of it arrives.
func TestFleetHostFallsSilentWithNothingWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.jsonl")
	line := func(id string) string {
		s := viewtest.New(time.Now())
		c := viewtest.Child{ID: id, Caps: event.Launched(true).Set}
		s.Created(c)
		s.States(c, event.StateStarting, event.StateRunning)
		return viewtest.GatewayLine("h1", 0, 0, s.Out...)
	}
	if err := viewtest.AppendGateway(path, line("build")); err != nil {
		t.Fatal(err)
	}
	r, err := fleet.NewReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := live.NewFleet(dir, r, fleet.Options{SilentAfter: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-l.CaughtUp()
	silent := func() bool {
		hs := l.State().Fleet.Hosts
		return len(hs) == 1 && hs[0].Silent
	}
	deadline := time.After(20 * time.Second)
	for !silent() {
		select {
		case <-l.Changed():
		case <-deadline:
			t.Fatalf("h1 never fell silent: %+v", l.State().Fleet.Hosts)
		}
	}
	waitModel(t, l, "build stale for its host's silence", func(m *view.Model) bool {
		n := m.Node(view.KeyOf("h1", "build"))
		return n != nil && n.View.Stale && strings.HasPrefix(n.View.StaleReason, view.HostSilent)
	})
	if err := viewtest.AppendGateway(path, line("lint")); err != nil {
		t.Fatal(err)
	}
	waitModel(t, l, "h1 heard again", func(m *view.Model) bool {
		n := m.Node(view.KeyOf("h1", "lint"))
		return n != nil && !n.View.Stale
	})
}
