package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/view/live"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// The refresh benchmarks measure what one refresh of top costs after 100
// new events (25 new children), in process: the follower's reading and
// applying, the model's sync and rebuild, and the frame, on 10,000
// ended children already shown (100 hosts × 100 children for a fleet;
// the same children, ids unique, in one journal). bench/topbench measures
// the same in the real binary in a pty.

const (
	benchHosts    = 100
	benchChildren = 100
)

// benchScenes is the ended children of each host (4 events each).
func benchScenes(now time.Time) [][]event.Event {
	var out [][]event.Event
	for range benchHosts {
		s := viewtest.New(now.Add(-time.Hour))
		for c := range benchChildren {
			ch := viewtest.Child{ID: fmt.Sprintf("c%d", c), Caps: event.Launched(true).Set, Command: []string{"sleep", "60"}}
			s.Created(ch)
			s.States(ch, event.StateStarting, event.StateRunning)
			s.End(ch, event.StateCompleted, 0)
		}
		out = append(out, s.Out)
	}
	return out
}

// newEvents is round r's 100 new events: 25 new children, each created,
// starting, running and with an activity.
func newEvents(r int, now time.Time) []event.Event {
	s := viewtest.New(now)
	for i := range 25 {
		ch := viewtest.Child{ID: fmt.Sprintf("new-%03d-%02d", r, i), Caps: event.Launched(true).Set, Command: []string{"make", "test"}, HeartbeatMs: 10_000}
		s.Created(ch)
		s.States(ch, event.StateStarting, event.StateRunning)
		s.Event(ch, event.KindActivity, "", "compiling", nil)
	}
	return s.Out
}

// benchRefresh runs top's model over follower, appending round r's
// bytes (made beforehand: the writer's work is not the reader's) to path
// before each refresh, and reports the process's CPU per refresh.
func benchRefresh(b *testing.B, follower *live.Follower, now time.Time, path string, round func(r int) []byte) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { follower.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-follower.CaughtUp()
	m := New(Options{Live: follower, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(caughtMsg{})
	m.View()
	rounds := make([][]byte, b.N)
	for r := range rounds {
		rounds[r] = round(r)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := 0
	if p := os.Getenv("REFRESH_PROFILE"); p != "" {
		// The refreshes alone (go test's -cpuprofile has the setup too).
		pf, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		pprof.StartCPUProfile(pf)
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(rounds[r]); err != nil {
			b.Fatal(err)
		}
		want := fmt.Sprintf("new-%03d-24", r)
		for {
			<-follower.Changed()
			m.Update(changedMsg{})
			found := false
			for _, row := range m.rows {
				if row.Node.ID() == want {
					found = true
					break
				}
			}
			if found {
				break
			}
		}
		m.View()
		r++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkRefreshFleet(b *testing.B) {
	now := time.Now().UTC()
	dir := b.TempDir()
	live0 := filepath.Join(dir, "gateway.jsonl")
	var lines []string
	for h, evs := range benchScenes(now) {
		lines = append(lines, viewtest.GatewayLine(fmt.Sprintf("host-%d", h), 0, 100*time.Millisecond, evs...))
	}
	if err := viewtest.AppendGateway(live0, lines...); err != nil {
		b.Fatal(err)
	}
	r0, err := fleet.NewReader(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r0.Close()
	follower := live.NewFleet(dir, r0, fleet.Options{})
	seq := int64(0)
	benchRefresh(b, follower, now, live0, func(r int) []byte {
		evs := newEvents(r, now)
		l := viewtest.GatewayLine("bench-host", seq, 100*time.Millisecond, evs...)
		seq += int64(len(evs))
		return []byte(l)
	})
}

func BenchmarkRefreshJournal(b *testing.B) {
	now := time.Now().UTC()
	path := filepath.Join(b.TempDir(), "journal.jsonl")
	var all []event.Event
	for h, evs := range benchScenes(now) {
		for _, e := range evs {
			e.ChildID = fmt.Sprintf("h%d-%s", h, e.ChildID)
			e.Lineage.RootChildID = e.ChildID
			e.EventID = fmt.Sprintf("h%d-%s", h, e.EventID)
			all = append(all, e)
		}
	}
	if err := viewtest.Append(path, all); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	seq := int64(bytes.Count(data, []byte("\n"))) // journalSequence is the line's number
	follower := live.New(live.JournalLines(path))
	benchRefresh(b, follower, now, path, func(r int) []byte {
		var out []byte
		for _, l := range viewtest.Lines(newEvents(r, now)) {
			seq++
			out = append(append(append(out, l[:len(l)-1]...), `,"journalSequence":`+strconv.FormatInt(seq, 10)+"}"...), '\n')
		}
		return out
	})
}
