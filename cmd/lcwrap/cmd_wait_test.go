package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// background is an lcwrap process a test runs beside others.
type background struct {
	cmd            *exec.Cmd
	stdout, stderr testtool.Buffer
	done           chan struct{}
	err            error
}

// startLcwrap starts lcwrap on journal with env added.
func startLcwrap(t *testing.T, journal string, env []string, args ...string) *background {
	t.Helper()
	b := &background{cmd: lcwrapCmd(t, journal, args...), done: make(chan struct{})}
	b.cmd.Env = append(b.cmd.Env, env...)
	b.cmd.Stdout, b.cmd.Stderr = &b.stdout, &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.err = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// exit waits for the process's end and returns its exit code.
func (b *background) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(60 * time.Second):
		b.cmd.Process.Kill()
		t.Fatalf("lcwrap %s did not end\nstdout: %s\nstderr: %s", strings.Join(b.cmd.Args[1:], " "), b.stdout.String(), b.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(b.err, &ee) {
		return ee.ExitCode()
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return 0
}

// eventually waits, up to a deadline, until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gate is a file a child waits for before it ends: the test opens it once
// the waiter is known to be following.
func gate(dir, name string) (path, script string) {
	path = filepath.Join(dir, name)
	return path, "while [ ! -e " + path + " ]; do sleep 0.02; done; "
}

// wait follows the journal: a child still running when wait starts is
// waited for, and --exit-code gives its own code, 128+N for a signal N
// (issue 25).
func TestWaitFollowsExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         int
	}{
		{"exit", "exit 7", 7},
		{"signal", "kill -KILL $$", 128 + 9},
		{"zero", "true", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j := filepath.Join(dir, "journal.jsonl")
			g, wait := gate(dir, "go")
			child := startLcwrap(t, j, nil, "--child-id", "c", "--", "sh", "-c", wait+tc.script)
			// The child is running (its running event is in the journal)
			// and cannot end before the gate opens.
			eventually(t, "the child running", func() bool {
				b, _ := os.ReadFile(j)
				return strings.Contains(string(b), `"state":"running"`)
			})
			w := startLcwrap(t, j, nil, "wait", "--exit-code", "--json", "c")
			if err := os.WriteFile(g, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			child.exit(t)
			if got := w.exit(t); got != tc.want {
				t.Fatalf("wait --exit-code = %d, want %d\nstdout: %s\nstderr: %s", got, tc.want, w.stdout.String(), w.stderr.String())
			}
			if !strings.Contains(w.stdout.String(), `"wait":"met","childId":"c"`) {
				t.Fatalf("no final row: %s", w.stdout.String())
			}
		})
	}
}

// A child that does not exist yet is waited for; it appears, and ends.
func TestWaitForChildNotYetThere(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl") // no journal yet either
	w := startLcwrap(t, j, nil, "wait", "--for", "completed", "late")
	eventually(t, "wait saying there is no journal yet", func() bool {
		return strings.Contains(w.stderr.String(), "lcwrap: no journal at "+j+" yet: waiting for it to be created")
	})
	lcwrapRun(t, j, "--child-id", "other", "--", "true")
	lcwrapRun(t, j, "--child-id", "late", "--", "true")
	if got := w.exit(t); got != 0 {
		t.Fatalf("exit %d: %s", got, w.stderr.String())
	}
}

// An adopted process's exit is not known to lcwrap: --exit-code is 123,
// never 0.
func TestWaitExitCodeAdopted(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	g, wait := gate(dir, "go")
	p := exec.Command("sh", "-c", wait+"exit 0")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { p.Wait(); close(reaped) }()
	adopt := startLcwrap(t, j, nil, "adopt", "--child-id", "adopted", strconv.Itoa(p.Process.Pid))
	eventually(t, "the adopted process in the journal", func() bool {
		b, _ := os.ReadFile(j)
		return strings.Contains(string(b), `"childId":"adopted"`)
	})
	w := startLcwrap(t, j, nil, "wait", "--exit-code", "adopted")
	os.WriteFile(g, nil, 0o600)
	<-reaped
	if got := adopt.exit(t); got != 0 {
		t.Fatalf("adopt: exit %d: %s", got, adopt.stderr.String())
	}
	if got := w.exit(t); got != 123 {
		t.Fatalf("wait --exit-code on an adopted process = %d, want 123 (end unknown)\n%s%s", got, w.stdout.String(), w.stderr.String())
	}
}

// wait follows the journal through rotation: the terminal event lands in
// a file started after wait began, while the one it was reading is sealed.
func TestWaitUnderRotation(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	g, wait := gate(dir, "go")
	child := startLcwrap(t, j, nil, "--journal-max-bytes", "1500", "--child-id", "rot", "--", "sh", "-c", wait+"exit 4")
	eventually(t, "the child running", func() bool {
		b, _ := os.ReadFile(j)
		return strings.Contains(string(b), `"state":"running"`)
	})
	w := startLcwrap(t, j, nil, "wait", "--exit-code", "rot")
	for i := 0; i < 12; i++ {
		lcwrapRun(t, j, "emit", "--journal-max-bytes", "1500", "--child-id", "noise", "--kind", "heartbeat")
	}
	sealed, _ := filepath.Glob(j + ".sealed-*")
	if len(sealed) == 0 {
		t.Fatal("the journal was never rotated: the test shows nothing")
	}
	os.WriteFile(g, nil, 0o600)
	child.exit(t)
	if got := w.exit(t); got != 4 {
		t.Fatalf("wait --exit-code across a rotation = %d, want 4\n%s", got, w.stderr.String())
	}
}

// fleetFixture writes the gateway output recorded for fleet.txtar into
// dir/gw and returns that directory.
func fleetFixture(t *testing.T, dir string) string {
	t.Helper()
	a, err := txtar.ParseFile("testdata/script/fleet.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if f.Name == "gw/gateway.jsonl" {
			gw := filepath.Join(dir, "gw")
			os.MkdirAll(gw, 0o700)
			if err := os.WriteFile(filepath.Join(gw, "gateway.jsonl"), f.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			return gw
		}
	}
	t.Fatal("no gw/gateway.jsonl in fleet.txtar")
	return ""
}

// wait and watch read a fleet: a child is (host, childId); an open child
// of a silent host is stale (never ended); watch follows the gateway's
// output as records arrive.
func TestWaitWatchFleet(t *testing.T) {
	dir := t.TempDir()
	gw := fleetFixture(t, dir)
	j := filepath.Join(dir, "unused.jsonl")
	if out, _ := lcwrapRun(t, j, "wait", "--fleet", gw, "--host", "rec-a", "test"); !strings.Contains(out, "rec-a/test") {
		t.Fatalf("the final row: %s", out)
	}
	if code := startLcwrap(t, j, nil, "wait", "--fleet", gw, "--host", "rec-a", "--exit-code", "test").exit(t); code != 3 {
		t.Fatalf("wait --fleet --exit-code = %d, want 3", code)
	}
	lcwrapRun(t, j, "wait", "--fleet", gw, "--host", "rec-b", "--for", "stale", "sub")
	if code := startLcwrap(t, j, nil, "wait", "--fleet", gw, "--host", "rec-b", "--for", "completed", "sub", "--timeout", "200ms").exit(t); code != 124 {
		t.Fatalf("a silent host's open child: wait = %d, want 124 (stale, not ended)", code)
	}

	w := startWatch(t, j, nil, "--fleet", gw, "--for", "failed", "--json")
	b, _ := os.ReadFile(filepath.Join(gw, "gateway.jsonl"))
	line := strings.Split(string(b), "\n")[1]
	if !strings.Contains(line, `\"childId\":\"test\"`) {
		t.Fatal("the fixture's second line is not rec-a's test child")
	}
	f, err := os.OpenFile(filepath.Join(gw, "gateway.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.ReplaceAll(line, "test", "late") + "\n")
	f.Close()
	eventually(t, "the new child's failure", func() bool { return strings.Contains(w.stdout.String(), `"childId":"late"`) })
	w.stop(t)
	if out := w.stdout.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, `"host":"rec-a","childId":"late","state":"failed"`) {
		t.Fatalf("watch --fleet printed %s", out)
	}
}

// wait goes on through a quarantine: blocked at a bad line (said on
// stderr), it reads on once 'lcwrap journal repair' quarantines it.
func TestWaitThroughQuarantine(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	lcwrapRun(t, j, "emit", "--child-id", "q", "--kind", "created", "--state", "created", "--external")
	lcwrapRun(t, j, "emit", "--child-id", "q", "--kind", "state_changed", "--state", "starting")
	f, err := os.OpenFile(j, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not an event\n")
	f.Close()
	w := startLcwrap(t, j, nil, "wait", "--for", "completed", "q")
	eventually(t, "wait saying where the journal stops", func() bool {
		return strings.Contains(w.stderr.String(), "stops at line 3")
	})
	lcwrapRun(t, j, "journal", "repair")
	lcwrapRun(t, j, "emit", "--child-id", "q", "--kind", "state_changed", "--state", "running")
	lcwrapRun(t, j, "emit", "--child-id", "q", "--kind", "terminal", "--state", "completed")
	if got := w.exit(t); got != 0 {
		t.Fatalf("exit %d\n%s", got, w.stderr.String())
	}
}
