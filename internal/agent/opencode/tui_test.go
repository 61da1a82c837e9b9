package opencode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// waitFor polls cond until it holds or limit has passed.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, show func() string) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s\n%s", limit, what, show())
		}
	}
}

// script writes a shell script that runs command in w's project with w's
// environment (and extra).
func (w *world) script(command string, extra ...string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range append(slices.Clone(w.env), extra...) {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") || k == "TERM" {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	b.WriteString(command + "\n")
	path := filepath.Join(w.t.TempDir(), "run.sh")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// states lists the opencode children's state changes: "session STATE"
// or "sub STATE", with ":reason" for a wait.
func states(evs []event.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Source != "opencode" || (ev.Kind != event.KindStateChanged && ev.Kind != event.KindTerminal) || strings.HasPrefix(ev.ChildID, "opencode-server-") {
			continue
		}
		s := "session " + string(ev.State)
		if strings.Contains(ev.ChildID, ".") {
			s = "sub " + string(ev.State)
		}
		if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); d.WaitingFor != "" {
			s += ":" + d.WaitingFor
		}
		out = append(out, s)
	}
	return out
}

// api calls opencode's HTTP API on 127.0.0.1:port.
func api(t *testing.T, port, method, path, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://127.0.0.1:"+port+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestTUIPermission runs the real TUI, `lcwrap --pty -- opencode`, in
// tmux with OPENCODE_PERMISSION={"bash":"ask"}. Its prompt, sent through
// the TUI's own HTTP API on the port lcwrap chose (read from the created
// event), makes the model call the task tool: a sub-agent (opencode's
// general agent) whose shell call asks for a permission. The journal has
// the sub-agent waiting for permission; status, top and report show it
// (the captures of docs/agents-opencode.md); the permission answered
// through the HTTP API (once) puts it back to running; it ends as opencode
// reports it (idle), the session waits for the user, and when the TUI
// quits the session still open is lost.
func TestTUIPermission(t *testing.T) {
	testtool.Need(t, "opencode", installOpencode)
	testtool.Need(t, "tmux", "apt-get install tmux")
	testtool.Need(t, "chromium", "apt-get install chromium")
	lc := testtool.Lcwrap(t)
	top := testtool.Companion(t, "lcwrap-top") // built before Offline re-runs the test in its namespace
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	x := testtool.NewTmux(t)
	stderr := filepath.Join(t.TempDir(), "stderr")
	x.Do("new-session", "-d", "-s", "t", "-x", "140", "-y", "40",
		w.script(fmt.Sprintf("%s --pty -- opencode 2>%s; sleep 600", lc, stderr), `OPENCODE_PERMISSION={"bash":"ask"}`))
	show := func() string {
		b, _ := os.ReadFile(stderr)
		return fmt.Sprintf("states %v\nlcwrap stderr: %s\nscreen:\n%s", states(w.events()), b, x.Screen("t:0"))
	}
	// The port lcwrap chose, from its created event.
	var port string
	waitFor(t, time.Minute, "lcwrap's created event", func() bool {
		for _, ev := range w.events() {
			if ev.Source == "lcwrap" && ev.Kind == event.KindCreated {
				var d struct {
					Agent agent.AgentLaunch `json:"agent"`
				}
				json.Unmarshal(ev.Details, &d)
				if i := slices.Index(d.Agent.AddedArgs, "--port"); i >= 0 && i+1 < len(d.Agent.AddedArgs) {
					port = d.Agent.AddedArgs[i+1]
					return true
				}
			}
		}
		return false
	}, show)
	waitFor(t, 90*time.Second, "the TUI's server and prompt", func() bool {
		code, _ := api(t, port, "GET", "/session", "")
		return code == 200 && strings.Contains(x.Screen("t:0"), "Ask anything")
	}, show)
	// lcwrap connects within 200 ms of the server's answer; the prompt
	// goes in through the TUI's own API.
	for _, c := range []struct{ path, body string }{
		{"/tui/append-prompt", `{"text":"lcwrap-scenario:agent go"}`},
		{"/tui/submit-prompt", ``},
	} {
		if code, b := api(t, port, "POST", c.path, c.body); code != 200 {
			t.Fatalf("POST %s: %d %s", c.path, code, b)
		}
	}
	waitFor(t, 90*time.Second, "the sub-agent waiting for permission", func() bool {
		return slices.Contains(states(w.events()), "sub waiting:permission")
	}, show)

	// What status, top and report show of the wait.
	status, errs, code := w.run(lc, "status")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errs)
	}
	if !strings.Contains(status, "waiting:permission") {
		t.Fatalf("status does not show the wait:\n%s", status)
	}
	x.Do("new-window", "-t", "t:1", w.script("exec "+top))
	var topScreen string
	waitFor(t, time.Minute, "top showing the wait", func() bool {
		topScreen = x.Screen("t:1")
		return strings.Contains(topScreen, "waiting:permission")
	}, func() string { return topScreen })
	html := filepath.Join(t.TempDir(), "report.html")
	if _, errs, code := w.run(lc, "report", "--html", html); code != 0 {
		t.Fatalf("report: %d %s", code, errs)
	}
	checkReport(t, html, w.events())
	captureDocs(t, status, topScreen)
	x.Do("kill-window", "-t", "t:1")

	// The answer, through the HTTP API.
	code, b := api(t, port, "GET", "/permission", "")
	var pending []struct {
		ID         string `json:"id"`
		SessionID  string `json:"sessionID"`
		Permission string `json:"permission"`
	}
	if err := json.Unmarshal(b, &pending); code != 200 || err != nil || len(pending) != 1 || pending[0].Permission != "bash" {
		t.Fatalf("GET /permission: %d %s", code, b)
	}
	if code, b := api(t, port, "POST", "/permission/"+pending[0].ID+"/reply", `{"reply":"once"}`); code != 200 {
		t.Fatalf("reply: %d %s", code, b)
	}
	waitFor(t, 90*time.Second, "running again, the sub-agent's end and the session waiting for the user", func() bool {
		st := states(w.events())
		i := slices.Index(st, "sub waiting:permission")
		return i >= 0 && slices.Contains(st[i:], "sub running") && slices.Contains(st[i:], "sub completed") && slices.Contains(st[i:], "session waiting:user")
	}, show)
	if b, err := os.ReadFile(filepath.Join(w.project, "sub.txt")); err != nil || string(b) != "sub\n" {
		t.Errorf("the allowed shell call did not run: %q %v", b, err)
	}
	// Quit: ctrl-c until lcwrap has recorded the end.
	ended := func() bool {
		for _, ev := range w.events() {
			if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(time.Minute); !ended() && time.Now().Before(deadline); time.Sleep(time.Second) {
		x.Do("send-keys", "-t", "t:0", "C-c")
	}
	if !ended() {
		t.Fatalf("the TUI did not quit\n%s", show())
	}
	st := states(w.events())
	for _, want := range []string{"session starting", "session running", "sub starting", "sub running", "sub waiting:permission", "sub completed", "session waiting:user", "session lost"} {
		if !slices.Contains(st, want) {
			t.Errorf("no %q in %v", want, st)
		}
	}
	if st[len(st)-1] != "session lost" {
		t.Errorf("the session was not lost at the end: %v", st)
	}
	for _, ev := range w.events() {
		if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
			var d struct {
				Exit *event.Exit `json:"exit"`
			}
			json.Unmarshal(ev.Details, &d)
			if d.Exit == nil {
				t.Errorf("lcwrap's terminal event has no exit: %s", ev.Details)
			}
		}
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}

// checkReport: the HTML report names the sub-agent (its type, general),
// its wait for permission and the session above it; with -update its
// screenshot is docs/img/report-opencode.png.
func checkReport(t *testing.T, html string, evs []event.Event) {
	t.Helper()
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	var sub, session string
	for _, ev := range evs {
		if ev.Source == "opencode" && ev.Kind == event.KindCreated {
			if strings.Contains(ev.ChildID, ".") {
				sub = ev.ChildID
			} else {
				session = ev.ChildID
			}
		}
	}
	page := string(b)
	for _, want := range []string{
		`data-child="` + session + `"`,
		`data-child="` + sub + `" data-state="waiting"`,
		"permission",
		"general sub-agent started",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	testtool.ShotOnUpdate(t, html, "../../../docs/img/report-opencode.png", "1280,520")
}

// captureDocs checks docs/agents-opencode.md's captures of status and
// top at the wait.
func captureDocs(t *testing.T, status, topScreen string) {
	t.Helper()
	doccapture.Check(t, "../../../docs/agents-opencode.md", "opencode-status", "$ lcwrap status\n"+status)
	// top's screen: its rows, without the blank lines under them.
	lines := strings.Split(strings.TrimRight(topScreen, "\n "), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	doccapture.Check(t, "../../../docs/agents-opencode.md", "opencode-top", strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "\n"))
}
