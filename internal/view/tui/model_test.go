package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/view/live"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// start follows a journal holding scene s and returns top's model, caught
// up, at 80×24, with the clock at now.
func start(t *testing.T, s *viewtest.Scene, now time.Time) (*Model, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if len(s.Out) > 0 {
		if err := viewtest.Append(path, s.Out); err != nil {
			t.Fatal(err)
		}
	}
	follower := live.New(live.JournalLines(path))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { follower.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-follower.CaughtUp():
	case <-time.After(20 * time.Second):
		t.Fatal("the journal was not read")
	}
	m := New(Options{Live: follower, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(caughtMsg{})
	return m, path
}

func keys(m *Model, ks ...string) {
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "up":
			msg = tea.KeyMsg{Type: tea.KeyUp}
		case "backspace":
			msg = tea.KeyMsg{Type: tea.KeyBackspace}
		case "ctrl+c":
			msg = tea.KeyMsg{Type: tea.KeyCtrlC}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m.Update(msg)
	}
}

func screenLines(t *testing.T, m *Model, width int) []string {
	t.Helper()
	out := m.View()
	lines := strings.Split(out, "\n")
	if len(lines) > m.height {
		t.Fatalf("%d lines on a screen of %d:\n%s", len(lines), m.height, out)
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > width {
			t.Fatalf("line wider than %d: %q", width, l)
		}
	}
	return lines
}

func TestTreeStatesAndKeys(t *testing.T) {
	s := viewtest.Standard(t0)
	m, _ := start(t, s, s.At.Add(10*time.Second))
	scr := strings.Join(screenLines(t, m, 80), "\n")
	for _, want := range []string{"◆ waiting", "└─ sub-tests", "● running", "◎ observed", "stale ", "?5", "3 ended hidden (e shows)", helpLine} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "\x1b[") {
		t.Fatal("colour without Color")
	}
	if got := strings.Join(m.Rows(), ","); got != viewtest.LongID.ID+",fetch-2,server-9,agent-1,session-1,sub-explore,sub-tests" {
		t.Fatalf("rows %s", got)
	}
	keys(m, "j", "j", "down", "k")
	if m.Selected() != "server-9" {
		t.Fatalf("selected %q", m.Selected())
	}
	keys(m, "G")
	if m.Selected() != "sub-tests" {
		t.Fatalf("selected %q after G", m.Selected())
	}
	// Ended children, retries under their root.
	keys(m, "e")
	if got := strings.Join(m.Rows(), ","); !strings.Contains(got, "build-7,build-7-a1") || !strings.Contains(got, "test-3") {
		t.Fatalf("ended rows missing: %s", got)
	}
	if !strings.Contains(m.View(), "build-7-a1 #1") {
		t.Fatal("the retry shows no attempt number")
	}
	if m.Selected() != "sub-tests" {
		t.Fatalf("selection moved to %q when rows changed", m.Selected())
	}
	keys(m, "e")
	// Filter: typed live, enter keeps it, esc clears it.
	keys(m, "/", "w", "a", "i", "t")
	if got := strings.Join(m.Rows(), ","); got != "agent-1,session-1,sub-tests" {
		t.Fatalf("filtered rows %s", got)
	}
	if !strings.Contains(m.View(), "filter: wait") {
		t.Fatal("the filter being typed is not shown")
	}
	keys(m, "enter", "esc")
	if len(m.Rows()) != 7 {
		t.Fatalf("esc did not clear the filter: %v", m.Rows())
	}
	// Typed faster than read: one message with several runes.
	keys(m, "gjj")
	if m.Selected() != "server-9" {
		t.Fatalf("selected %q after gjj", m.Selected())
	}
}

func TestDetailPane(t *testing.T) {
	s := viewtest.Standard(t0)
	m, _ := start(t, s, s.At)
	keys(m, "/", "server", "enter", "enter")
	if !m.detail {
		t.Fatal("enter did not open the detail pane")
	}
	scr := strings.Join(screenLines(t, m, 80), "\n")
	for _, want := range []string{"server-9", "Capabilities", "history", "? unknown: observed from outside", detailHelp} {
		if !strings.Contains(scr, want) {
			t.Errorf("detail lacks %q:\n%s", want, scr)
		}
	}
	keys(m, "j", "j", "esc")
	if m.detail {
		t.Fatal("esc did not close the pane")
	}
	keys(m, "esc", "G", "enter")
	if !strings.Contains(m.View(), "agent-1 › session-1 › sub-tests") {
		t.Fatalf("no lineage in the pane:\n%s", m.View())
	}
	if cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil {
		t.Fatal("q in the pane does not quit")
	}
}

func TestLiveUpdatesAndNarrowScreen(t *testing.T) {
	s := viewtest.Standard(t0)
	m, path := start(t, s, s.At)
	more := viewtest.New(s.At)
	more.Created(viewtest.Child{ID: "late-1"})
	if err := viewtest.Append(path, more.Out); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(strings.Join(m.Rows(), ","), "late-1") {
		if time.Now().After(deadline) {
			t.Fatal("an appended child never showed")
		}
		select {
		case <-m.live.Changed():
			m.Update(changedMsg{})
		case <-time.After(100 * time.Millisecond):
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 12})
	lines := screenLines(t, m, 40)
	if !strings.Contains(strings.Join(lines, "\n"), "waiting") {
		t.Fatalf("40 columns lost the states:\n%s", strings.Join(lines, "\n"))
	}
}

func TestNoEvidence(t *testing.T) {
	m, _ := start(t, viewtest.New(t0), t0)
	if first := strings.Split(m.View(), "\n")[0]; first != projection.NoEvidence {
		t.Fatalf("first line %q", first)
	}
}

// With no journal, top says where it looked and what to do; with an
// empty one, that it read it.
func TestNoJournalSaysWhere(t *testing.T) {
	m, path := start(t, viewtest.New(t0), t0)
	scr := strings.Join(screenLines(t, m, 80), "\n")
	if !strings.Contains(strings.Join(strings.Fields(scr), " "), "No journal at "+path+" yet: waiting for it. Run a command under lcwrap first ('lcwrap -- CMD')") {
		t.Fatalf("no word of where it looked:\n%s", scr)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m.Update(changedMsg{})
	if scr := strings.Join(strings.Fields(m.View()), " "); !strings.Contains(scr, "Read "+path+": it holds no lifecycle event yet") {
		t.Fatalf("an empty journal:\n%s", scr)
	}
}

func TestColourAndWaitingStandOut(t *testing.T) {
	s := viewtest.Standard(t0)
	m, _ := start(t, s, s.At)
	m.color = true
	out := m.View()
	if !strings.Contains(out, "\x1b[1;30;43m◆ waiting\x1b[0m") {
		t.Fatalf("waiting does not stand out:\n%q", out)
	}
	_ = event.StateWaiting
}

func TestWrap(t *testing.T) {
	got := wrap("  history       ? unknown: its source may not have seen every transition", 30)
	want := []string{"  history       ? unknown: its", "    source may not have seen", "    every transition"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("wrap: %q", got)
	}
	for _, l := range got {
		if utf8.RuneCountInString(l) > 30 {
			t.Fatalf("wrapped line too long: %q", l)
		}
	}
}

// The clock redraws a row when its text would change, and only then: a
// running child's duration advances second by second; a screen of ended
// children waits for midnight; an empty one for nothing.
func TestClockRedrawsWhenTheScreenChanges(t *testing.T) {
	s := viewtest.New(t0)
	c := viewtest.Child{ID: "run-1"}
	s.Created(c)
	s.States(c, event.StateStarting, event.StateRunning)
	now := t0.Add(10*time.Second + 300*time.Millisecond)
	m, path := start(t, s, now)
	m.clock = func() time.Time { return now }
	row := func() string {
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.Contains(l, "run-1") {
				return l
			}
		}
		t.Fatalf("no row of run-1:\n%s", m.View())
		return ""
	}
	if !strings.Contains(row(), " 10s ") {
		t.Fatalf("row at +10.3s: %q", row())
	}
	// By default the clock waits DefaultInterval between redraws, though
	// the seconds change sooner.
	if due := m.Due(); !due.Equal(now.Add(DefaultInterval)) {
		t.Fatalf("by default the clock is due at %v, want %v", due, now.Add(DefaultInterval))
	}
	m.interval = time.Second // as with --interval 1s
	m.Update(tickMsg(now))
	for _, want := range []string{" 11s ", " 12s "} {
		due := m.Due()
		if due.IsZero() || due.Sub(now) > time.Second {
			t.Fatalf("the clock is due at %v, now %v", due, now)
		}
		now = due
		m.Update(tickMsg(now))
		if !strings.Contains(row(), want) {
			t.Fatalf("row at %v: %q, want %q", now.Sub(t0), row(), want)
		}
	}
	// Ended, the row changes only with the date it is started on.
	s.Out, s.At = nil, now
	s.End(c, event.StateCompleted, 0)
	if err := viewtest.Append(path, s.Out); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for m.total == 0 || m.tally["completed"] == 0 {
		select {
		case <-m.live.Changed():
			m.Update(changedMsg{})
		case <-deadline:
			t.Fatal("the end was not followed")
		}
	}
	keys(m, "e") // show ended children
	if due, midnight := m.Due(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC); !due.Equal(midnight) {
		t.Fatalf("with only an ended child the clock is due at %v, want %v", due, midnight)
	}
	keys(m, "e") // hidden again: nothing on the screen changes with time
	if due := m.Due(); !due.IsZero() {
		t.Fatalf("with no rows the clock is due at %v", due)
	}
}
