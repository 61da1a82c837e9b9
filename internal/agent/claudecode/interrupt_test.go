package claudecode_test

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/anthropicmock"
	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
	"github.com/lcwrap/lcwrap/internal/view"
)

// startInTmux runs argv in the test's tmux (session t, 120×40), in the
// project directory with the world's environment.
func startInTmux(w *world, x *testtool.Tmux, argv ...string) {
	startTmuxSession(w, x, "t", 120, 40, argv...)
}

// startTmuxSession runs argv in a new session of the test's tmux, of the
// given size, in the project directory with the world's environment.
func startTmuxSession(w *world, x *testtool.Tmux, name string, width, height int, argv ...string) {
	script := filepath.Join(w.t.TempDir(), "run-"+name+".sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	for i, a := range argv {
		argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	fmt.Fprintf(&b, "export TERM=xterm-256color\nexec %s\n", strings.Join(argv, " "))
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", name, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), script)
}

// TestInteractiveInterrupt: Esc during a long tool call fires no hook;
// lcwrap reads the interruption from the session's transcript and records
// the session waiting for the user, naming that evidence — `status` shows
// the reason.
func TestInteractiveInterrupt(t *testing.T) {
	w := newWorld(t)
	x := testtool.NewTmux(t)
	startInTmux(w, x, lcwrap(t), "--child-id", "claude-1", "--", "claude", "--permission-mode", "default", "--allowedTools=Bash", anthropicmock.ScenarioSleep+" go")
	show := func() string {
		_, st := sessionStates(w.events())
		return fmt.Sprintf("session states %v\nscreen:\n%s", st, x.Screen("t"))
	}
	waitFor(t, "the long Bash call", func() bool {
		id, _ := sessionStates(w.events())
		return id != "" && slices.Contains(activities(w.events(), id), "Bash: "+anthropicmock.SleepCommand)
	}, show)
	// The tool's permission decision comes by telemetry, within its export
	// interval: wait for it, so that the last activity the capture shows
	// is the interruption's, not a decision that arrived after it.
	waitFor(t, "the Bash call's permission decision (telemetry)", func() bool {
		id, _ := sessionStates(w.events())
		return slices.ContainsFunc(activities(w.events(), id), func(a string) bool { return strings.HasPrefix(a, "permission for Bash") })
	}, show)
	if _, st := sessionStates(w.events()); st[len(st)-1] != "running" {
		t.Fatalf("before Esc the session is %v", st)
	}
	x.Do("send-keys", "-t", "t", "Escape")
	var evidence string
	waitFor(t, "the interruption recorded", func() bool {
		for _, ev := range w.events() {
			if ev.Source == "claude-code" && ev.Kind == event.KindStateChanged && ev.State == event.StateWaiting {
				d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
				if d.WaitingFor == "user" && strings.HasPrefix(d.Evidence, "transcript: [Request interrupted by user") {
					evidence = d.Evidence
					return true
				}
			}
		}
		return false
	}, show)
	out, errs, code := w.run(lcwrap(t), "status", "--json")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errs)
	}
	var st struct {
		Children []struct {
			Source  string `json:"source"`
			Display string `json:"display"`
			Waiting *struct {
				Reason   string `json:"reason"`
				Evidence string `json:"evidence"`
			} `json:"waiting"`
		} `json:"children"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range st.Children {
		if c.Source == "claude-code" {
			found = true
			if c.Display != "waiting" || c.Waiting == nil || c.Waiting.Reason != "user" || c.Waiting.Evidence != evidence {
				t.Fatalf("status shows the interrupted session as %+v %+v", c, c.Waiting)
			}
		}
	}
	if !found {
		t.Fatalf("no session in status:\n%s", out)
	}
	// The telemetry of the request comes within its export interval (1 s):
	// status then shows the agent's cost beside the reason.
	var table string
	waitFor(t, "the session's cost in status", func() bool {
		table, _, _ = w.run(lcwrap(t), "status")
		return strings.Contains(table, "waiting:user") && strings.Contains(table, "≈$")
	}, func() string { return table })
	testtool.Need(t, "jq", "apt-get install jq")
	js, errs, code := w.run("sh", "-c", lcwrap(t)+` status --json | jq '.children[] | select(.source == "claude-code") | {childId, display, waiting, agent}'`)
	if code != 0 {
		t.Fatalf("status --json | jq: %d %s", code, errs)
	}
	doccapture.Check(t, "../../../docs/agents.md", "agent-interrupted",
		"$ lcwrap status\n"+table+"$ lcwrap status --json | jq '.children[] | select(.source == \"claude-code\") | {childId, display, waiting, agent}'\n"+js)
	// No TRACEPARENT of the user's: the run has a new trace of lcwrap's,
	// recorded on the launched process.
	traced := false
	for _, ev := range w.events() {
		if ev.ChildID == "claude-1" && ev.Kind == event.KindCreated {
			traced = true
			cd, _ := event.DecodeDetails[launchedCreated](ev.Details)
			if cd.Agent == nil || cd.Agent.TraceFrom != "lcwrap" || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(cd.Agent.TraceID) {
				t.Fatalf("the run's trace: %s", ev.Details)
			}
		}
	}
	if !traced {
		t.Fatal("no created event of the launched process")
	}
	// top and report read the same journal: the reason beside the cost.
	id, _ := sessionStates(w.events())
	doccapture.Check(t, "../../../docs/agents.md", "agent-interrupted-top", topCapture(t, w, x))
	doccapture.Check(t, "../../../docs/agents.md", "agent-interrupted-report", reportCapture(t, w, id, evidence))
	x.Do("send-keys", "-t", "t", "/exit")
	waitFor(t, "/exit typed", func() bool { return strings.Contains(x.Screen("t"), "/exit") }, show)
	x.Do("send-keys", "-t", "t", "Enter")
	waitFor(t, "the session's end", func() bool {
		_, st := sessionStates(w.events())
		return len(st) > 0 && st[len(st)-1] == "completed"
	}, show)
}

// topCapture runs `lcwrap top` (lcwrap-top built beside the test's
// lcwrap) on the world's journal in a tmux session of its own, 200
// columns wide (nothing cut): the table once it shows the session's reason and cost,
// then the session's detail pane down to its capabilities.
func topCapture(t *testing.T, w *world, x *testtool.Tmux) string {
	t.Helper()
	bin := lcwrap(t)
	top := filepath.Join(filepath.Dir(bin), "lcwrap-top")
	if _, err := os.Stat(top); err != nil {
		if out, err := exec.Command("go", "build", "-o", top, "github.com/lcwrap/lcwrap/cmd/lcwrap-top").CombinedOutput(); err != nil {
			t.Fatalf("go build lcwrap-top: %v\n%s", err, out)
		}
	}
	startTmuxSession(w, x, "top", 200, 7, bin, "top")
	screen := func() string { return x.Do("capture-pane", "-p", "-t", "top") }
	var table string
	waitFor(t, "top showing the session waiting for the user, and its cost", func() bool {
		table = screen()
		return strings.Contains(table, "waiting:user") && strings.Contains(table, "≈$")
	}, func() string { return table })
	x.Do("resize-window", "-t", "top", "-y", "30")
	x.Do("send-keys", "-t", "top", "j")
	x.Do("send-keys", "-t", "top", "Enter")
	var detail string
	waitFor(t, "top's detail pane of the session", func() bool {
		detail = screen()
		return strings.Contains(detail, "Waiting   for user") && strings.Contains(detail, "Usage ")
	}, func() string { return detail })
	head, _, ok := strings.Cut(detail, "\nCapabilities")
	if !ok {
		t.Fatalf("top's detail pane has no Capabilities:\n%s", detail)
	}
	x.Do("send-keys", "-t", "top", "q")
	return "$ lcwrap top\n" + strings.TrimRight(table, "\n") + "\n$ lcwrap top   # j, enter: the session's details\n" + strings.TrimRight(head, "\n") + "\n"
}

// reportCapture writes `lcwrap report` of the world's journal and returns
// what it says of the session: its row in the table, its waiting episode
// on the timeline and its section down to its capabilities, after
// checking the HTML holds the agent's cost and the reason with its
// evidence.
func reportCapture(t *testing.T, w *world, session, evidence string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.html")
	if _, errs, code := w.run(lcwrap(t), "report", "--html", file); code != 0 {
		t.Fatalf("report: %d %s", code, errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	row := regexp.MustCompile(`<tr data-child="` + regexp.QuoteMeta(session) + `" data-state="waiting">.*</tr>`).FindString(page)
	if row == "" || !strings.Contains(row, "waiting:user") || !strings.Contains(row, "≈$") {
		t.Fatalf("the report's row of %s lacks the reason or the cost:\n%s", session, row)
	}
	cells := regexp.MustCompile(`<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row, -1)
	var texts []string
	for _, c := range cells {
		texts = append(texts, html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(c[1], "")))
	}
	// The waiting episode on the session's timeline lane, named with its
	// reason and the evidence that opened it.
	episode := ""
	for _, m := range regexp.MustCompile(`<title>(waiting[^<]*)</title>`).FindAllStringSubmatch(page, -1) {
		if e := html.UnescapeString(m[1]); strings.Contains(e, "for user") && strings.Contains(e, "opened by "+view.Shorten(evidence, 60)) {
			episode = e
		}
	}
	if episode == "" {
		t.Fatalf("the report's timeline has no waiting episode for the user opened by %q", evidence)
	}
	sec := regexp.MustCompile(`(?s)<section id="c\d+" data-child="` + regexp.QuoteMeta(session) + `"><pre>(.*?)</pre></section>`).FindStringSubmatch(page)
	if sec == nil {
		t.Fatalf("the report has no section for %s", session)
	}
	detail, _, ok := strings.Cut(html.UnescapeString(sec[1]), "\nCapabilities")
	if !ok || !strings.Contains(detail, "Waiting   for user") || !strings.Contains(detail, "Usage ") {
		t.Fatalf("the report's section of %s lacks its reason or usage:\n%s", session, detail)
	}
	// LCWRAP_AGENT_REPORT_SHOT=PATH: a headless Chromium screenshot there
	// of the report of the session alone (--child), its section in view
	// (docs/img/report-agent.png is one).
	if shot := os.Getenv("LCWRAP_AGENT_REPORT_SHOT"); shot != "" {
		one := filepath.Join(t.TempDir(), "session.html")
		if _, errs, code := w.run(lcwrap(t), "report", "--child", session, "--html", one); code != 0 {
			t.Fatalf("report --child: %d %s", code, errs)
		}
		testtool.Chromium(t, one, "--window-size=1280,1340", "--hide-scrollbars", "--screenshot="+shot)
	}
	return "$ lcwrap report --html report.html   # what it says of the session\n" +
		"row:      " + strings.Join(texts, " | ") + "\n" +
		"timeline: " + episode + "\n" +
		"section:\n" + strings.TrimRight(detail, "\n") + "\n"
}
