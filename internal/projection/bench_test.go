package projection

import (
	"fmt"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// benchStream is what bench/genevents writes: children going through
// created, starting, running, activity and heartbeats, then terminal.
func benchStream(b *testing.B, n, children int) ([]event.Event, [][]byte) {
	per := n / children
	events := make([]event.Event, 0, n)
	raws := make([][]byte, 0, n)
	for i := range n {
		c := i % children
		seq := int64(i/children + 1)
		id := fmt.Sprintf("build-%05d", c)
		when := t0.Add(time.Duration(i) * time.Millisecond)
		var e event.Event
		switch {
		case seq == 1:
			e = withDetails(ev(id, 1, event.KindCreated, created), map[string]any{"command": []string{"make", "test"}, "heartbeatIntervalMs": 10000})
		case seq == 2:
			e = ev(id, seq, event.KindStateChanged, starting)
		case seq == 3:
			e = ev(id, seq, event.KindStateChanged, running)
		case seq == int64(per):
			e = withDetails(ev(id, seq, event.KindTerminal, completed), map[string]any{"exit": map[string]any{"code": 0}})
		case seq%2 == 1:
			e = withActivity(ev(id, seq, event.KindActivity, ""), fmt.Sprintf("ok pkg%d", seq))
		default:
			e = ev(id, seq, event.KindHeartbeat, "")
		}
		e = at(e, when)
		raw := line(b, e)
		parsed, _, _ := event.Parse(raw)
		events = append(events, parsed)
		raws = append(raws, raw)
	}
	return events, raws
}

// BenchmarkApply measures the projection alone (events already parsed):
// what `lcwrap status` adds to parsing.
func BenchmarkApply(b *testing.B) {
	const n, children = 100000, 1000
	events, raws := benchStream(b, n, children)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := New()
		for i := range events {
			p.Apply(&events[i], raws[i])
		}
		if p.Len() != children {
			b.Fatal(p.Len())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}
