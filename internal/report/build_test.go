package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/report"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// TestBuildKeepsHistoriesOfDrawnOnly: a report of many children holds a
// history for the children it draws only (issue 23 item 12: its memory
// is bounded by the children drawn, not by the journal), and says
// exactly what a report that kept every history says.
func TestBuildKeepsHistoriesOfDrawnOnly(t *testing.T) {
	s := viewtest.New(t0)
	const children = 400
	for i := range children {
		c := viewtest.Child{ID: fmt.Sprintf("job-%03d", i), Caps: event.Launched(true).Set, HeartbeatMs: 1000, Command: []string{"make", "job"}}
		s.Created(c)
		s.States(c, event.StateStarting, event.StateRunning)
		s.Event(c, event.KindActivity, "", "step", nil)
		if i%40 != 0 { // every 40th stays open
			s.End(c, event.StateCompleted, 0)
		}
	}
	sub := viewtest.Child{ID: "sub", Parent: "job-000", Root: "job-000", Source: "claude-code"}
	s.Created(sub)
	s.States(sub, event.StateRunning)
	lines := viewtest.Lines(s.Out)
	reads := 0
	read := func(m *view.Model, keep func(string) bool) error {
		reads++
		for i := range s.Out {
			if keep == nil || keep(s.Out[i].ChildID) {
				m.Apply(&s.Out[i], lines[i], int64(i+1))
			}
		}
		return nil
	}
	now := s.At.Add(time.Minute)
	for _, o := range []report.Options{
		{Input: "j", Now: now, Limit: 25},
		{Input: "j", Now: now, Limit: 25, Children: []string{"job-000", "job-007"}},
		{Input: "j", Now: now, Limit: 25, Since: t0.Add(30 * time.Second).UnixMilli()},
	} {
		reads = 0
		m, err := report.Build(read, true, view.NewModel, o)
		if err != nil {
			t.Fatal(err)
		}
		if reads != 2 {
			t.Fatalf("read %d times, want 2", reads)
		}
		drawn := report.Drawn(m, o)
		if len(drawn) >= children/2 {
			t.Fatalf("%d drawn: the limit did not apply", len(drawn))
		}
		kept := 0
		for _, n := range m.Nodes() {
			if n.Hist != nil {
				kept++
			}
		}
		if kept != len(drawn) {
			t.Fatalf("%d histories kept for %d children drawn of %d", kept, len(drawn), m.Len())
		}
		// The same report as one that keeps every history.
		reads = 0
		all, err := report.Build(read, false, view.NewModel, o)
		if err != nil || reads != 1 {
			t.Fatalf("a stream: read %d times, %v", reads, err)
		}
		var a, b bytes.Buffer
		if _, err := report.Write(&a, m, o); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Write(&b, all, o); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("the reports differ (children %v, since %d)", o.Children, o.Since)
		}
		if !strings.Contains(a.String(), "Events (last") {
			t.Fatal("no history in the report")
		}
	}
}
