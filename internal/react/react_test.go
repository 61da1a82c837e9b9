package react

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
	"github.com/lcwrap/lcwrap/internal/watch"
)

func tr(child string, line int64) *watch.Transition {
	return &watch.Transition{Key: watch.Key{ChildID: child}, State: "waiting", Previous: "running",
		EventID: fmt.Sprintf("e/%s/%d", child, line), At: watch.Position{Line: line}, Resume: watch.Position{Line: line - 1}}
}

type said struct {
	mu    sync.Mutex
	lines []string
}

func (s *said) say(l string) { s.mu.Lock(); s.lines = append(s.lines, l); s.mu.Unlock() }
func (s *said) all() string  { s.mu.Lock(); defer s.mu.Unlock(); return strings.Join(s.lines, "\n") }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The confirmed position never passes a transition whose command has not
// ended: a slow first command holds it while later ones finish.
func TestConfirmedWaitsForTheOldest(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "go")
	var out testtool.Buffer
	r := New(Options{Command: `if [ "$LCWRAP_WATCH_CHILD_ID" = slow ]; then while [ ! -e ` + g + ` ]; do sleep 0.02; done; fi; echo "$LCWRAP_WATCH_EVENT_ID"`,
		Jobs: 2, Env: Env(os.Environ()), Stdout: &out, Stderr: &out})
	defer r.Close(time.Second)
	r.Submit(tr("slow", 5))
	r.Submit(tr("fast", 6))
	r.Read(watch.Position{Line: 9})
	eventually(t, "the fast command", func() bool { return strings.Contains(out.String(), "e/fast/6") })
	if p, _ := r.Confirmed(); p.Line != 4 {
		t.Fatalf("confirmed %v while the command for line 5 runs, want line 4", p)
	}
	os.WriteFile(g, nil, 0o600)
	eventually(t, "everything confirmed", func() bool { p, _ := r.Confirmed(); return p.Line == 9 })
}

// Coalescing: transitions of one child within the window run once, as the
// newest, with the count in LCWRAP_WATCH_COALESCED; every one is handled.
func TestCoalesce(t *testing.T) {
	var out testtool.Buffer
	s := &said{}
	r := New(Options{Command: `echo "$LCWRAP_WATCH_EVENT_ID $LCWRAP_WATCH_COALESCED"`, Coalesce: 200 * time.Millisecond,
		Env: Env(os.Environ()), Stdout: &out, Stderr: &out, Say: s.say})
	defer r.Close(time.Second)
	for i := int64(1); i <= 5; i++ {
		r.Submit(tr("burst", i))
	}
	r.Submit(tr("other", 6))
	r.Read(watch.Position{Line: 6})
	eventually(t, "everything confirmed", func() bool { p, _ := r.Confirmed(); return p.Line == 6 && r.Idle() })
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	slices.Sort(got)
	if want := []string{"e/burst/5 4", "e/other/6 0"}; !slices.Equal(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
	if c := r.Counts(); c.Coalesced != 4 || c.Ran != 2 {
		t.Fatalf("counts %+v", c)
	}
}

// Memory is bounded by the queue, whatever the rate: 20,000 transitions
// against a command that takes a second keep at most --queue waiting; the
// oldest are dropped and said.
func TestQueueBounded(t *testing.T) {
	s := &said{}
	r := New(Options{Command: "sleep 1", Jobs: 2, Queue: 100, Env: Env(os.Environ()), Stdout: &testtool.Buffer{}, Stderr: &testtool.Buffer{}, Say: s.say})
	for i := int64(1); i <= 20000; i++ {
		r.Submit(tr(fmt.Sprintf("c%d", i), i))
		r.mu.Lock()
		q, pend := len(r.queue), len(r.out)
		r.mu.Unlock()
		if q > 100 || pend > 100+2 {
			t.Fatalf("after %d: %d queued, %d pending", i, q, pend)
		}
	}
	r.Close(0)
	if c := r.Counts(); c.Dropped < 19000 || c.Dropped+c.Ran+100+2 < 20000 {
		t.Fatalf("counts %+v", c)
	}
	if !strings.Contains(s.all(), "dropped the transition of c3 to waiting (event e/c3/3): 100 waiting already (--queue)") {
		t.Fatalf("the drops are not said: %.300s", s.all())
	}
	if n := strings.Count(s.all(), "dropped"); n > 2 {
		t.Fatalf("%d drops said one by one, want them summed: %.300s", n, s.all())
	}
}

// A failing command is reported, never fatal; the watcher's lineage
// variables are not passed on.
func TestFailureAndEnv(t *testing.T) {
	var out testtool.Buffer
	s := &said{}
	env := Env(append(os.Environ(), "LCWRAP_CHILD_ID=outer", "LCWRAP_ROOT_CHILD_ID=root", "LCWRAP_HOOK_TOKEN=secret", "LCWRAP_WATCH_STATE=stale-outer"))
	r := New(Options{Command: `echo "[${LCWRAP_CHILD_ID-}|${LCWRAP_ROOT_CHILD_ID-}|${LCWRAP_HOOK_TOKEN-}|$LCWRAP_WATCH_STATE]"; exit 3`, Env: env, Stdout: &out, Stderr: &out, Say: s.say})
	r.Submit(tr("a", 1))
	r.Read(watch.Position{Line: 1})
	eventually(t, "confirmed", func() bool { p, _ := r.Confirmed(); return p.Line == 1 })
	r.Close(time.Second)
	if got := strings.TrimSpace(out.String()); got != "[|||waiting]" {
		t.Fatalf("the command saw %q", got)
	}
	if !strings.Contains(s.all(), "the command for a running → waiting (event e/a/1) exited 3") {
		t.Fatalf("said %q", s.all())
	}
}
