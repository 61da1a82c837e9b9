package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/view/live"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// fleetScene writes a gateway's output with three hosts, each with a
// child "build" (the same id): fleet-a heard 5 s before now, fleet-b
// last heard 60 s before now (silent past 30 s), fleet-c heard 5 s
// before now with a clock ten minutes behind the gateway's.
func fleetScene(t *testing.T, dir string, now time.Time) string {
	t.Helper()
	build := viewtest.Child{ID: "build", Caps: event.Launched(true).Set, HeartbeatMs: 10_000, Command: []string{"make", "build"}}
	var lines []string
	for _, h := range []struct {
		name  string
		last  time.Time // host clock of its last event
		delay time.Duration
	}{
		{"fleet-a", now.Add(-5 * time.Second), 50 * time.Millisecond},
		{"fleet-b", now.Add(-60 * time.Second), 50 * time.Millisecond},
		{"fleet-c", now.Add(-5*time.Second - 10*time.Minute), 10*time.Minute + 50*time.Millisecond},
	} {
		s := viewtest.New(h.last.Add(-300 * time.Millisecond))
		s.Created(build)
		s.States(build, event.StateStarting, event.StateRunning)
		lines = append(lines, viewtest.GatewayLine(h.name, 0, h.delay, s.Out...))
	}
	p := filepath.Join(dir, "gateway.jsonl")
	if err := viewtest.AppendGateway(p, lines...); err != nil {
		t.Fatal(err)
	}
	return p
}

// startFleet follows the gateway output in dir as top --fleet does, and
// returns the model caught up at 100×30 with the clock at now.
func startFleet(t *testing.T, dir string, now time.Time) (*Model, *live.Follower) {
	return startFleetClock(t, dir, func() time.Time { return now })
}

func startFleetClock(t *testing.T, dir string, clock func() time.Time) (*Model, *live.Follower) {
	t.Helper()
	r, err := fleet.NewReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	follower := live.NewFleet(dir, r, fleet.Options{Now: clock, SilentAfter: 30 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { follower.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-follower.CaughtUp():
	case <-time.After(20 * time.Second):
		t.Fatal("the fleet was not read")
	}
	m := New(Options{Live: follower, Now: clock})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(caughtMsg{})
	return m, follower
}

func fleetRows(m *Model) string {
	var out []string
	for _, r := range m.rows {
		out = append(out, r.Node.Host+"/"+r.Node.ID())
	}
	return strings.Join(out, ",")
}

func rowOf(t *testing.T, scr, host string) string {
	t.Helper()
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, host) && strings.Contains(l, "build") {
			return l
		}
	}
	t.Fatalf("no row of %s's build:\n%s", host, scr)
	return ""
}

func TestFleetHostsSilenceSkewAndHostKey(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	fleetScene(t, dir, now)
	m, _ := startFleet(t, dir, now)
	if len(m.rows) != 3 {
		t.Fatalf("the same child id on three hosts is three children: %s", fleetRows(m))
	}
	scr := strings.Join(screenLines(t, m, 100), "\n")
	for _, want := range []string{"lcwrap top --fleet", "3 hosts (1 silent)", "HOST", "LAST HEARD", "SKEW", "DELAY", "SILENT 1m (children stale, not lost)", fleetHelp} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	// The silent host's open child is stale for its host's silence; the
	// others are fresh, fleet-c on its own clock ten minutes behind.
	if r := rowOf(t, scr, "fleet-b"); !strings.Contains(r, "stale (host silent)") {
		t.Errorf("fleet-b's child is not stale for its host's silence: %q", r)
	}
	for _, h := range []string{"fleet-a", "fleet-c"} {
		if r := rowOf(t, scr, h); strings.Contains(r, "stale") || !strings.Contains(r, "5s ago") {
			t.Errorf("%s's child is not 5s fresh: %q", h, r)
		}
	}
	if !strings.Contains(scr, "+10m0") {
		t.Errorf("fleet-c's skew is not shown:\n%s", scr)
	}
	// The detail pane names the host and the silence.
	for i, r := range m.rows {
		if r.Node.Host == "fleet-b" {
			m.sel = i
		}
	}
	m.clamp()
	keys(m, "enter")
	detail := m.View()
	if !strings.Contains(detail, "Host      fleet-b") || !strings.Contains(detail, "host silent since") {
		t.Errorf("the detail pane lacks the host or its silence:\n%s", detail)
	}
	keys(m, "esc")
	// H: one host at a time, then every host again.
	for _, h := range []string{"fleet-a", "fleet-b", "fleet-c"} {
		keys(m, "H")
		if got := fleetRows(m); got != h+"/build" {
			t.Fatalf("H: rows %s, want %s's only", got, h)
		}
		if v := m.View(); !strings.Contains(v, "host "+h+" (H: next host)") {
			t.Fatalf("H: the status line does not name %s:\n%s", h, v)
		}
	}
	keys(m, "H")
	if len(m.rows) != 3 {
		t.Fatalf("H after the last host: rows %s, want every host's", fleetRows(m))
	}
	// The text filter matches hosts too.
	keys(m, "/", "-", "c", "enter")
	if got := fleetRows(m); got != "fleet-c/build" {
		t.Fatalf("/-c: rows %s", got)
	}
}

func TestFleetFollowsNewLinesAndRotatedFiles(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	live := fleetScene(t, dir, now)
	m, f := startFleet(t, dir, now)
	// A new line on the live file: a new child of fleet-a.
	s := viewtest.New(now.Add(-time.Second))
	s.Created(viewtest.Child{ID: "deploy", Caps: event.Launched(false).Set})
	if err := viewtest.AppendGateway(live, viewtest.GatewayLine("fleet-a", 3, 50*time.Millisecond, s.Out...)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, f, func() bool { return strings.Contains(fleetRows(m), "fleet-a/deploy") })
	// The gateway rotates: the live file is renamed, a new one written.
	if err := os.Rename(live, filepath.Join(dir, "gateway-2026-11-30T14-00-00.000-size.jsonl")); err != nil {
		t.Fatal(err)
	}
	s = viewtest.New(now.Add(-time.Second))
	s.Created(viewtest.Child{ID: "lint", Caps: event.Launched(false).Set})
	if err := viewtest.AppendGateway(live, viewtest.GatewayLine("fleet-d", 0, 50*time.Millisecond, s.Out...)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, f, func() bool { return strings.Contains(fleetRows(m), "fleet-d/lint") })
	if v := m.View(); !strings.Contains(v, "4 hosts") {
		t.Fatalf("a host first heard of in the new file is not counted:\n%s", v)
	}
	if n := strings.Count(fleetRows(m), "/build"); n != 3 {
		t.Fatalf("after rotation: %d builds (read again?): %s", n, fleetRows(m))
	}
}

// waitFor refreshes m on each change of the follower until ok, or fails
// after a deadline.
func waitFor(t *testing.T, m *Model, f *live.Follower, ok func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		m.Update(changedMsg{})
		if ok() {
			return
		}
		select {
		case <-f.Changed():
		case <-deadline:
			t.Fatalf("not shown in time:\n%s", m.View())
		}
	}
}

// TestFleetLastHeardMovesWithTheClock: with nothing new arriving, a
// host's "last heard" is said at each frame's moment, redrawn when it
// reads differently, and the host falls silent past the threshold.
func TestFleetLastHeardMovesWithTheClock(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	fleetScene(t, dir, now)
	var mu sync.Mutex
	at := now
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	m, f := startFleetClock(t, dir, clock)
	if !strings.Contains(m.View(), "fleet-a  5s ago") {
		t.Fatalf("fleet-a not heard 5s ago:\n%s", m.View())
	}
	if d := m.Due(); d.IsZero() || d.After(now.Add(2*time.Second)) {
		t.Fatalf("the next redraw is due at %v, want within 2 s (fleet-a's last heard ticks)", d)
	}
	mu.Lock()
	at = now.Add(12 * time.Second)
	mu.Unlock()
	m.Update(tickMsg(at))
	if !strings.Contains(m.View(), "fleet-a  17s ago") {
		t.Fatalf("last heard did not move with the clock:\n%s", m.View())
	}
	mu.Lock()
	at = now.Add(40 * time.Second)
	mu.Unlock()
	waitFor(t, m, f, func() bool { return strings.Contains(m.View(), "3 hosts (3 silent)") })
	if r := rowOf(t, m.View(), "fleet-a"); !strings.Contains(r, "stale (host silent)") {
		t.Fatalf("fleet-a fell silent but its child is not stale: %q", r)
	}
}
