package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/lcwrap/lcwrap/internal/cancel"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// adapterCmd is lcwrapCmd without the race detector's pause at exit.
func adapterCmd(t *testing.T, j string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := lcwrapCmd(t, j, args...)
	cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	return cmd
}

// lcwrapExit runs lcwrap to its end and returns its output and exit code.
func lcwrapExit(t *testing.T, j string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := adapterCmd(t, j, args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// startWrapped starts `lcwrap --child-id id ... -- sleep 30` and waits
// until its child runs; it returns the wrapper and the sleep's identity.
func startWrapped(t *testing.T, j, id string, flags ...string) (*exec.Cmd, event.Identity) {
	t.Helper()
	args := append(append([]string{"--child-id", id}, flags...), "--", "sleep", "30")
	wrapper := adapterCmd(t, j, args...)
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		wrapper.Process.Kill()
		wrapper.Wait()
	})
	var child event.Identity
	waitFor(t, id+" to run", func() bool {
		for _, e := range journalEvents(t, j) {
			if e.ChildID == id && e.State == event.StateRunning {
				var d struct{ Child event.Identity }
				json.Unmarshal(e.Details, &d)
				child = d.Child
				child.Host, child.BootID = event.Host(), event.BootID()
				return true
			}
		}
		return false
	})
	t.Cleanup(func() { killOwnChild(t, child.PID) })
	return wrapper, child
}

// startOwn starts a process of the test's own, for adoption: cat, which
// exits 0 once its stdin is closed.
func startOwn(t *testing.T) (*exec.Cmd, io.WriteCloser, event.Identity) {
	t.Helper()
	cmd := exec.Command("cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // through os.Process's pidfd: never a recycled pid
		cmd.Wait()
	})
	id, _, err := event.IdentityOf(event.System, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, id
}

// adoptAs starts `lcwrap adopt --child-id id pid` and waits for its created
// event.
func adoptAs(t *testing.T, j, id string, pid int) *exec.Cmd {
	t.Helper()
	cmd := adapterCmd(t, j, "adopt", "--child-id", id, strconv.Itoa(pid))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitFor(t, id+" to be adopted", func() bool {
		for _, e := range journalEvents(t, j) {
			if e.ChildID == id && e.Kind == event.KindDiagnostic {
				return true // the limits, written after created
			}
		}
		return false
	})
	return cmd
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A running launched child is cancelled: the request, with its reason
// redacted, is recorded before the wrapper's terminal event, which says
// cancelled by SIGTERM; the whole job ends.
func TestCancelLaunchedChild(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	wrapper, child := startWrapped(t, j, "job")
	out, errOut, code := lcwrapExit(t, j, "", "cancel", "job", "--reason", "superseded --token hunter2", "--wait", "20s")
	if code != 0 {
		t.Fatalf("cancel exited %d: %s", code, errOut)
	}
	want := fmt.Sprintf("cancel requested: SIGTERM sent to the wrapper of job (pid %d)\njob ended: cancelled (exit SIGTERM)\n", wrapper.Process.Pid)
	if out != want || errOut != "" {
		t.Fatalf("stdout %q, stderr %q; want %q", out, errOut, want)
	}
	err := wrapper.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+15 {
		t.Fatalf("the wrapper ended with %v, want exit 143", err)
	}
	if v := event.CheckIdentity(event.System, child); v.Status != event.Gone {
		t.Fatalf("the child's process is still there: %s", v.Reason)
	}
	req, term := -1, -1
	events := journalEvents(t, j)
	for i, e := range events {
		switch {
		case e.Source == cancel.Source:
			req = i
		case e.Kind == event.KindTerminal:
			term = i
		}
	}
	if req < 0 || term < req {
		t.Fatalf("request at %d, terminal at %d", req, term)
	}
	d := events[req].DetailsMap()
	w, _ := d["wrapper"].(map[string]any)
	if d["reason"] != "superseded --token [REDACTED]" || d["request"] != "cancel" || w["pid"] != float64(wrapper.Process.Pid) {
		t.Fatalf("request details %s", events[req].Details)
	}
	if bytes.Contains(readFile(t, j), []byte("hunter2")) {
		t.Fatal("the secret in the reason reached the journal")
	}
	var td struct {
		Cancel struct{ Signal, By string }
		Exit   struct{ Signal string }
	}
	json.Unmarshal(events[term].Details, &td)
	if events[term].State != event.StateCancelled || td.Cancel.Signal != "SIGTERM" || td.Cancel.By != "signal" || td.Exit.Signal != "SIGTERM" {
		t.Fatalf("terminal event %s %s", events[term].State, events[term].Details)
	}
}

// An adopted process is never cancelled: refused with exit 3, nothing
// recorded, and its real parent later sees it exit 0 on its own.
func TestCancelAdoptedRefused(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	own, stdin, id := startOwn(t)
	adopter := adoptAs(t, j, "seen", id.PID)
	before := readFile(t, j)
	_, errOut, code := lcwrapExit(t, j, "", "cancel", "seen", "--reason", "stop")
	if code != 3 || !strings.Contains(errOut, "adopted (external) child") || !strings.HasSuffix(errOut, "nothing was sent\n") {
		t.Fatalf("cancel exited %d: %q", code, errOut)
	}
	if !bytes.Equal(readFile(t, j), before) {
		t.Fatal("a refused cancel appended to the journal")
	}
	if v := event.CheckIdentity(event.System, id); v.Status != event.Alive {
		t.Fatalf("the adopted process was affected: %s", v.Reason)
	}
	stdin.Close()
	if err := own.Wait(); err != nil || own.ProcessState.ExitCode() != 0 {
		t.Fatalf("the adopted process ended with %v, want exit status 0", own.ProcessState)
	}
	if err := adopter.Wait(); err != nil {
		t.Fatalf("lcwrap adopt: %v", err)
	}
	if _, ok := hasEvent(journalEvents(t, j), event.KindTerminal, event.StateLost); !ok {
		t.Fatal("no lost event from adopt")
	}
}

// The wrapper was SIGKILLed: cancel refuses with exit 6, appends nothing,
// and the orphaned child is left as it is (status --reconcile and adopt
// are the ways on).
func TestCancelKilledWrapper(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	wrapper, child := startWrapped(t, j, "k")
	wrapper.Process.Kill()
	wrapper.Wait()
	before := readFile(t, j)
	_, errOut, code := lcwrapExit(t, j, "", "cancel", "k", "--wait", "5s")
	if code != 6 || !strings.Contains(errOut, "its wrapper is gone (pid "+strconv.Itoa(wrapper.Process.Pid)) ||
		!strings.Contains(errOut, "the child may be lost: see lcwrap status --reconcile; nothing was sent") {
		t.Fatalf("cancel exited %d: %q", code, errOut)
	}
	if !bytes.Equal(readFile(t, j), before) {
		t.Fatal("a refused cancel appended to the journal")
	}
	if v := event.CheckIdentity(event.System, child); v.Status != event.Alive {
		t.Fatalf("the orphaned child was affected: %s", v.Reason)
	}
}

// The journal names a wrapper whose pid now belongs to another process
// (same pid, another start time; the process here is one of the test's
// own): it is never signalled.
func TestCancelRecycledWrapperPid(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	own, _, id := startOwn(t)
	recorded := id
	recorded.StartTime--
	recordLaunched(t, j, "reused", recorded, event.StateCreated, event.StateStarting, event.StateRunning)
	before := readFile(t, j)
	_, errOut, code := lcwrapExit(t, j, "", "cancel", "reused")
	if code != 6 || !strings.Contains(errOut, "start time differs") {
		t.Fatalf("cancel exited %d: %q", code, errOut)
	}
	if !bytes.Equal(readFile(t, j), before) {
		t.Fatal("a refused cancel appended to the journal")
	}
	if v := event.CheckIdentity(event.System, id); v.Status != event.Alive || own.ProcessState != nil {
		t.Fatalf("the process at the recycled pid was affected: %s", v.Reason)
	}
}

// recordLaunched appends the events `lcwrap run` writes for a child whose
// wrapper is the given identity, one per state (each call from a sourceEpoch
// of its own).
func recordLaunched(t *testing.T, j, id string, wrapper event.Identity, states ...event.State) {
	t.Helper()
	jr, err := journal.Open(j, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	em := emit.New(emit.Options{}, emit.NewJournalSink(jr))
	c := em.Child(id, event.Lineage{}, event.Launched(true))
	for _, st := range states {
		spec := emit.Spec{Kind: event.KindStateChanged, State: st}
		switch {
		case st == event.StateCreated:
			spec = emit.Spec{Kind: event.KindCreated, State: st, Details: event.FreeDetails{"command": []string{"make"}, "heartbeatIntervalMs": 10000, "wrapper": wrapper}}
		case st.Terminal():
			spec = emit.Spec{Kind: event.KindTerminal, State: st, Details: event.FreeDetails{"claim": "process-exit-status-only", "exit": map[string]any{"code": 0}}}
		}
		if _, err := c.Emit(spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := em.Close(); err != nil {
		t.Fatal(err)
	}
}

// snapshot → reconcile on a consistent journal (a running child, an ended
// one, an adopted process, all as recorded): complete, accepted, nothing
// changes.
func TestSnapshotRoundTripLive(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	startWrapped(t, j, "live", "--heartbeat", "0") // no heartbeats: the journal holds still
	lcwrapExit(t, j, "", "--child-id", "done", "--", "true")
	_, stdin, id := startOwn(t)
	defer stdin.Close()
	adoptAs(t, j, "seen", id.PID)

	out, errOut, code := lcwrapExit(t, j, "", "snapshot", "--reason", "reconnect")
	if code != 0 || errOut != "" {
		t.Fatalf("snapshot exited %d: %s", code, errOut)
	}
	s, err := event.ParseSnapshot([]byte(out))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]event.State{}
	for _, c := range s.Children {
		got[c.ChildID] = c.State
	}
	if !s.Complete || !s.Coverage.All || len(got) != 3 || got["live"] != event.StateRunning || got["done"] != event.StateCompleted || got["seen"] != event.StateCreated {
		t.Fatalf("snapshot %s", out)
	}
	before := readFile(t, j)
	rout, rerr, code := lcwrapExit(t, j, out, "reconcile", "--snapshot", "-")
	if code != 0 || !strings.HasSuffix(rout, "from lcwrap-snapshot: 0 corrected, 0 omissions counted, 0 refused (terminal)\n") || rerr != "" {
		t.Fatalf("reconcile exited %d: %q %q", code, rout, rerr)
	}
	if !bytes.Equal(readFile(t, j), before) {
		t.Fatal("reconciling a consistent journal with its own snapshot changed it")
	}
}
