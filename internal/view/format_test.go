package view

import (
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// texts is what the clock changes in a row (a running duration under a
// second aside: its milliseconds are not redrawn one by one).
func texts(v *projection.ChildView, now time.Time) string {
	fresh, _ := Fresh(v, now)
	d := Duration(v, now)
	if strings.HasSuffix(d, "ms") && !v.Ended() {
		d = "<1s"
	}
	return fresh + "|" + Started(v, now) + "|" + d
}

// NextChange is never late: until it, a row reads as at now (a running
// duration's milliseconds aside); a row of seconds changes right at it.
func TestNextChange(t *testing.T) {
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	start := time.Date(2026, 11, 30, 22, 59, 58, 250e6, time.UTC)
	running := event.StateRunning
	done := event.StateCompleted
	hb := func(last time.Time) *projection.Heartbeat {
		return &projection.Heartbeat{IntervalMs: 1000, DeadlineMs: 3000, LastEvidenceAt: stamp(last)}
	}
	views := map[string]*projection.ChildView{
		"running":           {FirstSeenAt: stamp(start), State: &running},
		"heartbeat":         {FirstSeenAt: stamp(start), State: &running, Heartbeat: hb(start.Add(5 * time.Second))},
		"ended":             {FirstSeenAt: stamp(start), State: &done, EndedAt: stamp(start.Add(time.Minute))},
		"never seen":        {State: &running},
		"heartbeat, silent": {FirstSeenAt: stamp(start), State: &running, Heartbeat: &projection.Heartbeat{DeadlineMs: 3000}},
	}
	for name, v := range views {
		for _, after := range []time.Duration{0, 400 * time.Millisecond, 1500 * time.Millisecond, 5500 * time.Millisecond, 8 * time.Second, 59 * time.Second, 3 * time.Minute, 59*time.Minute + 59*time.Second, 2 * time.Hour, 49 * time.Hour, 30 * 24 * time.Hour} {
			now := start.Add(after)
			next := NextChange(v, now)
			if name == "never seen" {
				if !next.IsZero() {
					t.Errorf("%s at +%v: next %v, want never", name, after, next)
				}
				continue
			}
			if !next.After(now) {
				t.Fatalf("%s at +%v: next %v is not after now", name, after, next)
			}
			for _, at := range []time.Time{now.Add(next.Sub(now) / 2), next.Add(-time.Millisecond)} {
				if texts(v, at) != texts(v, now) {
					t.Errorf("%s at +%v: %q at %v, before NextChange %v (%q at now)", name, after, texts(v, at), at, next, texts(v, now))
				}
			}
			if name == "running" && after > time.Second && after < time.Hour && texts(v, next) == texts(v, now) {
				t.Errorf("%s at +%v: nothing changed at NextChange %v", name, after, next)
			}
		}
	}
	// An ended row changes only with the day.
	if got := NextChange(views["ended"], start); !got.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ended: next %v, want midnight", got)
	}
}

// TestCostUnknown: an agent that reports tokens but no cost (Gemini) shows
// no cost in the row and "cost unknown" in its totals, never $0.
func TestCostUnknown(t *testing.T) {
	v := &projection.ChildView{Agent: &projection.AgentView{Usage: &projection.Usage{Requests: 3, Input: 30, Output: 15, CostUnknown: true, ReportedBy: "gemini", Via: "OTLP gemini_cli.api_response"}}}
	if c := Cost(v); c != "" {
		t.Errorf("cost %q", c)
	}
	if u := UsageText(v); !strings.Contains(u, "30 in / 15 out tokens") || !strings.Contains(u, "cost unknown") || strings.Contains(u, "$") {
		t.Errorf("usage %q", u)
	}
	v.Agent.Usage.CostUnknown, v.Agent.Usage.CostUSD = false, 0.5
	if c := Cost(v); c != "≈$0.5000" {
		t.Errorf("cost %q", c)
	}
}
