package live_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/live"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// waitModel waits until cond holds for the live model.
func waitModel(t *testing.T, l *live.Follower, what string, cond func(m *view.Model) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		ok := false
		l.With(func(m *view.Model) { m.Sync(time.Now()); ok = cond(m) })
		if ok {
			return
		}
		select {
		case <-l.Changed():
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A journal replaced under the view is noticed and read again into a new
// model: nothing of the old file stays, nothing of the new one is missed.
func TestLiveRereadsReplacedJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.jsonl")
	if err := viewtest.Append(path, viewtest.Standard(t0).Out); err != nil {
		t.Fatal(err)
	}
	l := live.New(live.JournalLines(path))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-l.CaughtUp()
	waitModel(t, l, "the first journal", func(m *view.Model) bool { return m.Node("sub-tests") != nil })

	other := filepath.Join(dir, "other.jsonl")
	s := viewtest.New(t0)
	s.Created(viewtest.Child{ID: "only-1"})
	if err := viewtest.Append(other, s.Out); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	waitModel(t, l, "the replacement", func(m *view.Model) bool {
		return m.Node("only-1") != nil && m.Node("sub-tests") == nil && m.Len() == 1
	})
	if st := l.State(); st.Rereads == 0 {
		t.Fatalf("the re-read is not counted: %+v", st)
	}
	// Appends to the new journal keep coming in.
	more := viewtest.New(t0)
	more.Created(viewtest.Child{ID: "only-2"})
	if err := viewtest.Append(path, more.Out); err != nil {
		t.Fatal(err)
	}
	waitModel(t, l, "an append to the new journal", func(m *view.Model) bool { return m.Node("only-2") != nil })
}
