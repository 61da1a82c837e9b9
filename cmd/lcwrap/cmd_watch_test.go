package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// startWatch starts lcwrap watch and waits until it follows the journal.
func startWatch(t *testing.T, journal string, env []string, args ...string) *background {
	t.Helper()
	w := startLcwrap(t, journal, env, append([]string{"watch"}, args...)...)
	eventually(t, "watch following the journal", func() bool {
		return strings.Contains(w.stderr.String(), "lcwrap: watch: following ")
	})
	return w
}

// stop ends a watcher as ^C would; it exits 0.
func (b *background) stop(t *testing.T) {
	t.Helper()
	b.cmd.Process.Signal(syscall.SIGTERM)
	if got := b.exit(t); got != 0 {
		t.Fatalf("watch ended %d on SIGTERM\n%s", got, b.stderr.String())
	}
}

func fileWords(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// A restart with --cursor loses nothing and repeats nothing it confirmed:
// what happened while it was down is handed on once it is back.
func TestWatchCursorRestart(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	out := filepath.Join(dir, "out")
	cursor := filepath.Join(dir, "watch.cursor")
	args := []string{"--for", "completed,failed", "--cursor", cursor, "--exec", `echo "$LCWRAP_WATCH_EVENT_ID" >> ` + out}
	lcwrapRun(t, j, "--child-id", "before", "--", "true") // before the first start: not handed on

	w := startWatch(t, j, nil, args...)
	for _, id := range []string{"a1", "a2", "a3"} {
		lcwrapRun(t, j, "--child-id", id, "--", "true")
	}
	eventually(t, "three commands", func() bool { return len(fileWords(out)) == 3 })
	w.stop(t)

	// While it is down.
	lcwrapRun(t, j, "--child-id", "b1", "--", "true")
	lcwrapCmd(t, j, "--child-id", "b2", "--", "sh", "-c", "exit 1").Run() // exits 1

	w = startWatch(t, j, nil, args...)
	lcwrapRun(t, j, "--child-id", "c1", "--", "true")
	eventually(t, "six commands", func() bool { return len(fileWords(out)) == 6 })
	w.stop(t)

	got := fileWords(out)
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
		if seen[id] > 1 {
			t.Fatalf("event %s handed on twice: %q", id, got)
		}
	}
	for _, child := range []string{"a1", "a2", "a3", "b1", "b2", "c1"} {
		found := false
		for _, id := range got {
			found = found || strings.Contains(id, "/"+child+"/")
		}
		if !found {
			t.Fatalf("the end of %s was never handed on: %q", child, got)
		}
	}
	for _, id := range got {
		if strings.Contains(id, "/before/") {
			t.Fatalf("a transition from before the first start was handed on: %q", got)
		}
	}
}

// A command that hangs is timed out, while the others run on the other
// slot; what timed out is said on stderr, and watch goes on.
func TestWatchHangingCommandTimedOut(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	out := filepath.Join(dir, "out")
	hang := filepath.Join(dir, "hang.log")
	script := `if [ "$LCWRAP_WATCH_CHILD_ID" = hang ]; then
  trap 'echo "stopped after $(wc -l < ` + out + `)" > ` + hang + `; exit 1' TERM
  echo started > ` + hang + `; sleep 120 & wait; echo finished > ` + hang + `
else echo "$LCWRAP_WATCH_CHILD_ID" >> ` + out + `; fi`
	w := startWatch(t, j, nil, "--for", "completed", "--jobs", "2", "--exec-timeout", "10s", "--no-cursor", "--exec", script)
	lcwrapRun(t, j, "--child-id", "hang", "--", "true")
	eventually(t, "the hanging command started", func() bool { b, _ := os.ReadFile(hang); return len(b) > 0 })
	for _, id := range []string{"ok1", "ok2", "ok3"} {
		lcwrapRun(t, j, "--child-id", id, "--", "true")
	}
	eventually(t, "the hanging command timed out", func() bool {
		return strings.Contains(w.stderr.String(), "timed out after 10s")
	})
	eventually(t, "the hanging command's trap", func() bool {
		b, _ := os.ReadFile(hang)
		return strings.HasPrefix(string(b), "stopped")
	})
	if b, _ := os.ReadFile(hang); strings.TrimSpace(string(b)) != "stopped after 3" {
		t.Fatalf("the others did not all run while one hung: %q (out %q)", b, fileWords(out))
	}
	if !strings.Contains(w.stderr.String(), "the command for hang running → completed") {
		t.Fatalf("the timeout does not name the transition:\n%s", w.stderr.String())
	}
	lcwrapRun(t, j, "--child-id", "after", "--", "true")
	eventually(t, "a command after the timeout", func() bool { return len(fileWords(out)) == 4 })
	w.stop(t)
}

// The webhook example: curl posts the transition's JSON to a URL (a local
// server on 127.0.0.1 here).
func TestWatchWebhook(t *testing.T) {
	testtool.Need(t, "curl", "apt-get install curl")
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
	}))
	defer srv.Close()
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	w := startWatch(t, j, []string{"HOOK=" + srv.URL}, "--for", "failed", "--no-cursor",
		"--exec", `curl -sS --fail -H 'Content-Type: application/json' --data-binary @- "$HOOK"`)
	lcwrapRun(t, j, "--child-id", "ok", "--", "true")
	exec := lcwrapCmd(t, j, "--child-id", "broke", "--", "sh", "-c", "exit 5")
	exec.Run()
	eventually(t, "the webhook called", func() bool { mu.Lock(); defer mu.Unlock(); return len(bodies) > 0 })
	w.stop(t)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d calls, want 1 (only the failure): %v", len(bodies), bodies)
	}
	b := bodies[0]
	if b["schema"] != "lcwrap-watch/1" || b["childId"] != "broke" || b["state"] != "failed" || b["previousState"] != "running" {
		t.Fatalf("the body: %v", b)
	}
	if ev, _ := b["event"].(map[string]any); ev == nil || ev["eventId"] != b["eventId"] {
		t.Fatalf("the body carries no event line: %v", b)
	}
	if x, _ := b["exit"].(map[string]any); x == nil || x["code"] != float64(5) {
		t.Fatalf("the body carries no exit: %v", b)
	}
}

// An lcwrap emit inside CMD does not take the watched child as its
// parent, nor whoever the watcher's own LCWRAP_CHILD_ID names (a watcher
// started inside the very agent it watches).
func TestWatchExecLineage(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	w := startWatch(t, j, []string{"LCWRAP_CHILD_ID=agent", "LCWRAP_ROOT_CHILD_ID=agent"}, "--for", "running", "--no-cursor",
		"--exec", `lcwrap emit --child-id "note-$LCWRAP_WATCH_CHILD_ID" --kind activity --activity "saw $LCWRAP_WATCH_STATE"`)
	lcwrapRun(t, j, "--child-id", "agent", "--", "true")
	eventually(t, "the command's emit", func() bool {
		b, _ := os.ReadFile(j)
		return strings.Contains(string(b), `"childId":"note-agent"`)
	})
	w.stop(t)
	b, _ := os.ReadFile(j)
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"childId":"note-agent"`) {
			continue
		}
		if strings.Contains(l, "parentChildId") || !strings.Contains(l, `"rootChildId":"note-agent"`) {
			t.Fatalf("the command's lcwrap took a parent: %s", l)
		}
	}
}

// Killed (SIGKILL, no chance to save): the restarted watcher hands on
// everything it had not confirmed; a transition may come twice (at least
// once), none is lost.
func TestWatchCursorAfterKill(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	out := filepath.Join(dir, "out")
	cursor := filepath.Join(dir, "watch.cursor")
	args := []string{"--for", "completed", "--cursor", cursor, "--exec", `echo "$LCWRAP_WATCH_EVENT_ID" >> ` + out}
	w := startWatch(t, j, nil, args...)
	for _, id := range []string{"k1", "k2"} {
		lcwrapRun(t, j, "--child-id", id, "--", "true")
	}
	eventually(t, "two commands", func() bool { return len(fileWords(out)) == 2 })
	w.cmd.Process.Kill()
	w.exit(t)
	lcwrapRun(t, j, "--child-id", "k3", "--", "true")
	w = startWatch(t, j, nil, args...)
	eventually(t, "k3's command", func() bool { return strings.Contains(strings.Join(fileWords(out), " "), "/k3/") })
	w.stop(t)
	got := strings.Join(fileWords(out), " ")
	for _, child := range []string{"k1", "k2", "k3"} {
		if !strings.Contains(got, "/"+child+"/") {
			t.Fatalf("the end of %s was lost: %q", child, got)
		}
	}
}
