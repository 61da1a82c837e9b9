package opencode_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// background starts argv in w's project, in a process group of its own;
// the test's end kills the group.
func (w *world) background(argv ...string) (*exec.Cmd, *testtool.Buffer) {
	w.t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.project, append(slices.Clone(w.env), `OPENCODE_PERMISSION={"bash":"ask"}`)
	out := &testtool.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd, out
}

// serve starts the real `opencode serve` on a free loopback port and
// waits until it answers.
func (w *world) serve(real string) (*exec.Cmd, string) {
	w.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd, out := w.background(real, "serve", "--port", port)
	waitFor(w.t, 90*time.Second, "opencode serve's answer", func() bool {
		code, _ := api(w.t, port, "GET", "/session", "")
		return code == 200
	}, out.String)
	return cmd, port
}

// prompt starts a session through the HTTP API and sends it text.
func prompt(t *testing.T, port, text string) string {
	t.Helper()
	code, b := api(t, port, "POST", "/session", `{}`)
	var s struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &s); code != 200 || err != nil || s.ID == "" {
		t.Fatalf("POST /session: %d %s", code, b)
	}
	body := fmt.Sprintf(`{"parts":[{"type":"text","text":%q}]}`, text)
	if code, b := api(t, port, "POST", "/session/"+s.ID+"/prompt_async", body); code/100 != 2 {
		t.Fatalf("prompt_async: %d %s", code, b)
	}
	return s.ID
}

// answer replies once to the one pending permission.
func answer(t *testing.T, port string) {
	t.Helper()
	code, b := api(t, port, "GET", "/permission", "")
	var pending []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &pending); code != 200 || err != nil || len(pending) != 1 {
		t.Fatalf("GET /permission: %d %s", code, b)
	}
	if code, b := api(t, port, "POST", "/permission/"+pending[0].ID+"/reply", `{"reply":"once"}`); code != 200 {
		t.Fatalf("reply: %d %s", code, b)
	}
}

// serverEvents lists the adopted server's child's events: kind and state.
func serverEvents(evs []event.Event) (id string, kinds []string) {
	for _, ev := range evs {
		if ev.Source == "opencode" && strings.HasPrefix(ev.ChildID, "opencode-server-") {
			id = ev.ChildID
			kinds = append(kinds, strings.TrimSpace(string(ev.Kind)+" "+string(ev.State)))
		}
	}
	return id, kinds
}

// TestAdoptServerURL: `lcwrap adopt --agent opencode http://127.0.0.1:PORT`
// of the real `opencode serve`. The server becomes a child of its own,
// its server.heartbeat that child's heartbeat; a session started through
// its API after the adoption is a child of it, its task sub-agent's
// permission a wait answered through the API, the session waiting for the
// user; when the server stops, the session still open and the server are
// lost and adopt exits 0.
func TestAdoptServerURL(t *testing.T) {
	real := testtool.Need(t, "opencode", installOpencode)
	lc := testtool.Lcwrap(t)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	srv, port := w.serve(real)
	adopt, out := w.background(lc, "adopt", "--agent", "opencode", "http://127.0.0.1:"+port)
	show := func() string {
		_, k := serverEvents(w.events())
		return fmt.Sprintf("server %v\nstates %v\nadopt:\n%s", k, states(w.events()), out.String())
	}
	waitFor(t, time.Minute, "the server's child", func() bool {
		_, k := serverEvents(w.events())
		return slices.Contains(k, "created created")
	}, show)
	prompt(t, port, "lcwrap-scenario:agent go")
	waitFor(t, 90*time.Second, "the sub-agent waiting for permission", func() bool {
		return slices.Contains(states(w.events()), "sub waiting:permission")
	}, show)
	status, errs, code := w.run(lc, "status")
	if code != 0 || !regexp.MustCompile(`opencode-server-\S+ +○ created .*\n└─ oc-\S+ +● running .*\n +└─ oc-\S+ +◆ waiting:permission`).MatchString(status) {
		t.Errorf("status: %d %s\n%s", code, errs, status)
	}
	answer(t, port)
	waitFor(t, 90*time.Second, "the session waiting for the user, and a heartbeat", func() bool {
		_, k := serverEvents(w.events())
		st := states(w.events())
		i := slices.Index(st, "sub waiting:permission")
		return slices.Contains(k, "heartbeat") && i >= 0 && slices.Contains(st[i:], "sub running") && slices.Contains(st[i:], "session waiting:user")
	}, show)
	syscall.Kill(-srv.Process.Pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- adopt.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("adopt: %v\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("adopt did not end with the server\n%s", show())
	}
	id, k := serverEvents(w.events())
	if k[len(k)-1] != "terminal lost" {
		t.Errorf("the server's child did not end lost: %v", k)
	}
	st := states(w.events())
	if st[len(st)-1] != "session lost" || !slices.Contains(st, "session running") {
		t.Errorf("states %v", st)
	}
	for _, ev := range w.events() {
		if ev.Source == "opencode" && ev.Kind == event.KindCreated && !strings.HasPrefix(ev.ChildID, "opencode-server-") {
			if !ev.Lineage.External || (!strings.Contains(ev.ChildID, ".") && ev.Lineage.ParentChildID != id) {
				t.Errorf("%s: lineage %+v (want external, under %s)", ev.ChildID, ev.Lineage, id)
			}
		}
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}

// TestAdoptServerPID: `lcwrap adopt PID` of the real `opencode serve`,
// recognised by its name: the listening socket it holds proves its server
// (the proof in the server child's created event); a session's shell call
// waiting for permission, answered; when the process is killed, the
// process, the server and the session are lost.
func TestAdoptServerPID(t *testing.T) {
	real := testtool.Need(t, "opencode", installOpencode)
	lc := testtool.Lcwrap(t)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	srv, port := w.serve(real)
	adopt, out := w.background(lc, "adopt", strconv.Itoa(srv.Process.Pid))
	show := func() string {
		_, k := serverEvents(w.events())
		return fmt.Sprintf("server %v\nstates %v\nadopt:\n%s", k, states(w.events()), out.String())
	}
	var proof struct {
		Proof struct {
			Port   int   `json:"port"`
			Chain  []int `json:"chain"`
			Holder struct {
				PID int `json:"pid"`
			} `json:"holder"`
		} `json:"proof"`
		URL string `json:"url"`
	}
	waitFor(t, time.Minute, "the server's child", func() bool {
		for _, ev := range w.events() {
			if ev.Source == "opencode" && ev.Kind == event.KindCreated && strings.HasPrefix(ev.ChildID, "opencode-server-") {
				return json.Unmarshal(ev.Details, &proof) == nil
			}
		}
		return false
	}, show)
	if strconv.Itoa(proof.Proof.Port) != port || proof.Proof.Holder.PID != srv.Process.Pid || proof.URL != "http://127.0.0.1:"+port {
		t.Errorf("proof %+v", proof)
	}
	prompt(t, port, "lcwrap-scenario:bash go")
	waitFor(t, 90*time.Second, "the session waiting for permission", func() bool {
		return slices.Contains(states(w.events()), "session waiting:permission")
	}, show)
	answer(t, port)
	waitFor(t, 90*time.Second, "the session waiting for the user", func() bool {
		st := states(w.events())
		i := slices.Index(st, "session waiting:permission")
		return i >= 0 && slices.Contains(st[i:], "session running") && slices.Contains(st[i:], "session waiting:user")
	}, show)
	syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- adopt.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("adopt: %v\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("adopt did not end with the process\n%s", show())
	}
	serverID, k := serverEvents(w.events())
	if k[len(k)-1] != "terminal lost" {
		t.Errorf("the server's child did not end lost: %v", k)
	}
	st := states(w.events())
	if st[len(st)-1] != "session lost" {
		t.Errorf("states %v", st)
	}
	var processLost bool
	for _, ev := range w.events() {
		if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal && ev.State == event.StateLost {
			processLost = true
		}
		if ev.ChildID == serverID && ev.Kind == event.KindCreated && ev.Lineage.ParentChildID == "" {
			t.Errorf("the server's child has no parent: %+v", ev.Lineage)
		}
	}
	if !processLost {
		t.Error("the adopted process was not lost")
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}
