package projection

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// genStream writes the events of n children the way real writers do: each
// sequence space a legal path on its own, at most one terminal event per
// child. Some children get events from a hook (a second space), some a
// lost event from a reconciler instead of their own terminal, and some lose
// an event for good (a gap that is never filled).
func genStream(rng *rand.Rand, n int) []event.Event {
	var out []event.Event
	tick := 0
	next := func() time.Time { tick++; return t0.Add(time.Duration(tick) * time.Millisecond) }
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		var mine []event.Event
		seq := int64(0)
		add := func(kind event.Kind, state event.State, details map[string]any) {
			seq++
			e := at(ev(id, seq, kind, state), next())
			if details != nil {
				e = withDetails(e, details)
			}
			if kind == event.KindActivity {
				e.Activity = fmt.Sprintf("step %d", seq)
			}
			mine = append(mine, e)
		}
		add(event.KindCreated, created, map[string]any{"command": []string{"job", id}, "heartbeatIntervalMs": 1000,
			"wrapper": localIdentity(100+i, 7)})
		state := created
		for range rng.IntN(10) {
			switch rng.IntN(4) {
			case 0:
				add(event.KindActivity, "", nil)
			case 1:
				add(event.KindHeartbeat, "", nil)
			case 2:
				add(event.KindDiagnostic, "", map[string]any{"note": "x"})
			case 3:
				var choices []event.State
				for _, s := range event.Successors(state) {
					if !s.Terminal() {
						choices = append(choices, s)
					}
				}
				state = choices[rng.IntN(len(choices))]
				add(event.KindStateChanged, state, map[string]any{"child": map[string]any{"pid": 200 + i, "startTime": 9}})
			}
		}
		ended := rng.IntN(10) < 6
		if ended {
			var terms []event.State
			for _, s := range event.Successors(state) {
				if s.Terminal() {
					terms = append(terms, s)
				}
			}
			add(event.KindTerminal, terms[rng.IntN(len(terms))], map[string]any{"exit": map[string]any{"code": rng.IntN(3)}, "claim": "process-exit-status-only"})
			if rng.IntN(2) == 0 {
				add(event.KindDiagnostic, "", map[string]any{"note": "late"})
			}
		}
		if len(mine) > 2 && rng.IntN(10) < 3 {
			k := 1 + rng.IntN(len(mine)-1) // never the created event
			mine = append(mine[:k], mine[k+1:]...)
		}
		if rng.IntN(10) < 3 {
			for s := int64(1); s <= int64(1+rng.IntN(3)); s++ {
				mine = append(mine, withActivity(at(withSpace(ev(id, s, event.KindActivity, ""), "hook", "h-"+id), next()), fmt.Sprintf("hook %d", s)))
			}
		}
		if !ended && rng.IntN(10) < 3 {
			mine = append(mine, withDetails(at(withSpace(ev(id, 1, event.KindTerminal, lost), reconcileSource, "r1"), next()),
				map[string]any{"claim": "process-exit-status-only", "exitStatus": "unknown"}))
		}
		out = append(out, mine...)
	}
	return out
}

// converged is what must not depend on delivery: the whole report at one
// moment, except the result counts (duplicates are counted, by design).
func converged(p *Projection, now time.Time) Report {
	r := p.Report(now, true)
	r.Events = Counts{}
	for i := range r.Children {
		r.Children[i].Diagnostics = Counts{}
	}
	return r
}

func project(t *testing.T, events []event.Event) *Projection {
	p := New()
	for _, e := range events {
		b := line(t, e)
		parsed, _, _ := event.Parse(b)
		p.Apply(&parsed, b)
	}
	return p
}

// The property: replaying a stream in any order, with any events repeated,
// gives the same projection as replaying it in order.
func TestShuffledReplaysConverge(t *testing.T) {
	now := t0.Add(time.Second)
	for s := range uint64(300) {
		rng := rand.New(rand.NewPCG(s, 1))
		events := genStream(rng, 1+rng.IntN(6))
		want := converged(project(t, events), now)
		for k := range 4 {
			replay := append([]event.Event(nil), events...)
			for range rng.IntN(len(events) + 1) {
				replay = append(replay, events[rng.IntN(len(events))])
			}
			rng.Shuffle(len(replay), func(i, j int) { replay[i], replay[j] = replay[j], replay[i] })
			got := converged(project(t, replay), now)
			if !reflect.DeepEqual(got, want) {
				for i := range want.Children {
					if i < len(got.Children) && !reflect.DeepEqual(got.Children[i], want.Children[i]) {
						t.Logf("in order: %s", jsonString(want.Children[i]))
						t.Logf("replayed: %s", jsonString(got.Children[i]))
					}
				}
				t.Fatalf("seed %d replay %d: the projection depends on delivery order", s, k)
			}
		}
	}
}
