// Package examples runs the day-one examples (ci/, hooks/, adopt/) as a
// user would: their own scripts, with an lcwrap built from this checkout
// first on PATH, real processes and real files, asserting on what they
// print and write, and checking that nothing they started outlives them.
package examples

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// binDir holds the lcwrap built by TestMain.
var binDir string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "lcwrap-examples-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", filepath.Join(dir, "lcwrap"), "../cmd/lcwrap")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "examples: building lcwrap:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// result is what one command did.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// env is the environment of one example run: lcwrap first on PATH, its
// own TMPDIR and state directory, none of the lineage or journal of an
// lcwrap that may be running the tests, and a marker that every process
// the run starts inherits (see checkNoLeftovers).
type env struct {
	t      *testing.T
	tmp    string // TMPDIR of the run
	marker string // LCWRAP_EXAMPLES_RUN=<random>
	vars   []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, tmp: t.TempDir()}
	b := make([]byte, 8)
	rand.Read(b)
	e.marker = "LCWRAP_EXAMPLES_RUN=" + hex.EncodeToString(b)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || k == "KEEP" || k == "TMPDIR" || k == "PATH" || k == "XDG_STATE_HOME" {
			continue
		}
		e.vars = append(e.vars, kv)
	}
	e.vars = append(e.vars, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+e.tmp, "XDG_STATE_HOME="+t.TempDir(), e.marker)
	t.Cleanup(func() { checkNoLeftovers(t, e.marker) })
	return e
}

// run runs name with args, stdin and extra variables; a run still going
// after two minutes is killed with its process group.
func (e *env) run(stdin io.Reader, extra []string, name string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(slices.Clip(e.vars), extra...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second // a leftover holding stdout must not hang the test
	err := cmd.Run()
	r := result{stdout.String(), stderr.String(), 0}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		e.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, r)
	}
	if ctx.Err() != nil {
		e.t.Fatalf("%s %s: still running after 2 minutes; killed\n%s", name, strings.Join(args, " "), r)
	}
	return r
}

// lcwrap runs the lcwrap under test.
func (e *env) lcwrap(extra []string, args ...string) result {
	e.t.Helper()
	return e.run(nil, extra, filepath.Join(binDir, "lcwrap"), args...)
}

// checkNoLeftovers fails the test if a process that inherited marker is
// still running once the run is over (it waits up to 10s for processes
// that are ending). Zombies have an empty environment and do not count.
func checkNoLeftovers(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		return // no /proc: nothing to check with
	}
	var left []string
	var pids []int
	testtool.Poll(10*time.Second, func() bool {
		left, pids = left[:0], pids[:0]
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			environ, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
			if err != nil || !slices.Contains(strings.Split(string(environ), "\x00"), marker) {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
			left = append(left, fmt.Sprintf("pid %d: %s", pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")))
			pids = append(pids, pid)
		}
		return len(left) == 0
	})
	if len(left) > 0 {
		t.Errorf("processes started by the example are still running (now killed):\n%s", strings.Join(left, "\n"))
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL) // ours: it carries this run's marker
		}
	}
}

// needJQ skips the test when jq is missing (fails it under CI): the CI
// example uses it.
func needJQ(t *testing.T) {
	t.Helper()
	testtool.Need(t, "jq", "apt-get install jq")
}

// event is the part of a lifecycle event the tests look at.
type event struct {
	SchemaVersion int    `json:"schemaVersion"`
	EventID       string `json:"eventId"`
	Source        string `json:"source"`
	ChildID       string `json:"childId"`
	Lineage       struct {
		RootChildID   string `json:"rootChildId"`
		ParentChildID string `json:"parentChildId"`
		External      bool   `json:"external"`
		AdoptedAt     string `json:"adoptedAt"`
	} `json:"lineage"`
	Kind         string            `json:"kind"`
	State        string            `json:"state"`
	Sequence     int               `json:"sequence"`
	Activity     string            `json:"activity"`
	Details      map[string]any    `json:"details"`
	Capabilities map[string]string `json:"capabilities"`
}

// isEventLine reports whether line is written as a lifecycle event line.
func isEventLine(line string) bool { return strings.HasPrefix(line, `{"schemaVersion":1,`) }

func parseEvent(t *testing.T, line string) event {
	t.Helper()
	var ev event
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("not a JSON event: %v: %s", err, line)
	}
	return ev
}

func readEvents(t *testing.T, path string) []event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event
	for line := range strings.Lines(string(b)) {
		evs = append(evs, parseEvent(t, strings.TrimSuffix(line, "\n")))
	}
	return evs
}

func allUnknown(caps map[string]string) bool {
	for _, k := range []string{"history", "heartbeat", "snapshot", "cancel", "terminalCause"} {
		if caps[k] != "unknown" {
			return false
		}
	}
	return true
}

// --- examples/ci ---

// fakeTestsOutput is what fake-tests.sh prints, in order.
func fakeTestsOutput(fail bool) []string {
	out := []string{
		"=== RUN   TestParse",
		"--- PASS: TestParse (0.00s)",
		"=== RUN   TestSlow",
		"--- PASS: TestSlow (0.30s)",
		"=== RUN   TestFlaky",
		"flaky_test.go:9: retrying after a timeout",
	}
	if fail {
		return append(out, "--- FAIL: TestFlaky (0.01s)", "    flaky_test.go:12: got 2, want 3", "FAIL", "fake-tests: exit 1")
	}
	return append(out, "--- PASS: TestFlaky (0.01s)", "PASS", "fake-tests: exit 0")
}

var (
	stepExited = regexp.MustCompile(`(?m)^run-local: the test step exited (\d+) `)
	validated  = regexp.MustCompile(`(?m)^(\d+) valid, 0 invalid, (\d+) log lines$`)
)

// checkCILog checks a CI log written by run-local.sh: the test output
// whole and in order, every lifecycle line whole and at a line boundary,
// created before the output, terminal after it with the command's exit
// code, and a lifecycle line in the middle of the output.
func checkCILog(t *testing.T, log string, fail bool, code int) (events, logLines int) {
	t.Helper()
	if !strings.HasSuffix(log, "\n") {
		t.Errorf("the log does not end with a newline: %q", log[max(0, len(log)-80):])
	}
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	var output []string // the test output, in order
	var evs []event
	var where []int // index in output before which each event came
	for _, l := range lines {
		if isEventLine(l) {
			evs = append(evs, parseEvent(t, l))
			where = append(where, len(output))
			continue
		}
		if strings.Contains(l, `{"schemaVersion"`) {
			t.Errorf("a lifecycle line glued to output: %q", l)
		}
		// lcwrap ends a line the command keeps open longer than 500ms
		// before an event that waits for it; join the two halves.
		if n := len(output); n > 0 && output[n-1] == "--- PASS: TestSlow " && l == "(0.30s)" {
			output[n-1] += l
			continue
		}
		output = append(output, l)
	}
	if want := fakeTestsOutput(fail); !slices.Equal(output, want) {
		t.Errorf("the test output in the log:\n%s\nwant:\n%s", strings.Join(output, "\n"), strings.Join(want, "\n"))
	}
	if len(evs) < 5 {
		t.Fatalf("%d lifecycle lines in the log, want created, starting, running, a heartbeat and terminal at least:\n%s", len(evs), log)
	}
	for i, ev := range evs {
		if ev.ChildID != "ci-local-test" || ev.Sequence != i+1 {
			t.Errorf("event %d: child %q sequence %d, want ci-local-test %d", i+1, ev.ChildID, ev.Sequence, i+1)
		}
	}
	if !isEventLine(lines[0]) || evs[0].Kind != "created" {
		t.Errorf("the log does not start with the created event: %q", lines[0])
	}
	last := evs[len(evs)-1]
	if !isEventLine(lines[len(lines)-1]) || last.Kind != "terminal" {
		t.Errorf("the log does not end with the terminal event: %q", lines[len(lines)-1])
	}
	wantState := map[bool]string{false: "completed", true: "failed"}[fail]
	exit, _ := last.Details["exit"].(map[string]any)
	if last.State != wantState || exit["code"] != float64(code) || last.Details["claim"] != "process-exit-status-only" {
		t.Errorf("terminal event: state %q details %v, want %s with exit code %d, claim process-exit-status-only", last.State, last.Details, wantState, code)
	}
	// fake-tests.sh waited, after "=== RUN   TestSlow", until the log showed
	// a lifecycle line after it: one must sit between that line and the next.
	slow := slices.Index(output, "=== RUN   TestSlow") + 1
	if !slices.Contains(where, slow) {
		t.Errorf("no lifecycle line between %q and %q (events before output lines %v)", output[slow-1], output[slow], where)
	}
	return len(evs), len(lines) - len(evs)
}

func TestCIExample(t *testing.T) {
	needJQ(t)
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "pass", true: "fail"}[fail], func(t *testing.T) {
			e := newEnv(t)
			var args, extra []string
			want := 0
			if fail {
				args, extra, want = []string{"--fail"}, []string{"KEEP=1"}, 1
			}
			r := e.run(nil, extra, "ci/run-local.sh", args...)
			if r.code != want {
				t.Fatalf("run-local.sh %v: exit %d, want %d (the test command's)\n%s", args, r.code, want, r)
			}
			m := stepExited.FindStringSubmatch(r.stdout)
			if m == nil || m[1] != strconv.Itoa(want) {
				t.Fatalf("run-local.sh did not say the test step (lcwrap) exited %d:\n%s", want, r)
			}
			var log string
			if fail {
				// KEEP=1: read the log and the artifacts it kept.
				dirs, _ := filepath.Glob(filepath.Join(e.tmp, "lcwrap-ci-example.*"))
				if len(dirs) != 1 {
					t.Fatalf("KEEP=1 kept %v, want one directory", dirs)
				}
				b, err := os.ReadFile(filepath.Join(dirs[0], "ci.log"))
				if err != nil {
					t.Fatal(err)
				}
				log = string(b)
				for _, a := range []string{"ci.log", "journal.jsonl", "report.html"} {
					if _, err := os.Stat(filepath.Join(dirs[0], "artifacts", a)); err != nil {
						t.Errorf("artifact %s not kept: %v", a, err)
					}
				}
				if rep, _ := os.ReadFile(filepath.Join(dirs[0], "artifacts", "report.html")); !strings.Contains(string(rep), `<tr data-child="ci-local-test" data-state="failed">`) {
					t.Errorf("report.html does not show ci-local-test as failed")
				}
			} else {
				// The log is what tee showed, between the step's two lines.
				_, after, ok1 := strings.Cut(r.stdout, "2>&1 | tee ci.log\n")
				before, _, ok2 := strings.Cut(after, "run-local: the test step exited")
				if !ok1 || !ok2 {
					t.Fatalf("cannot find the log in run-local.sh's output:\n%s", r)
				}
				log = before
				if left, _ := os.ReadDir(e.tmp); len(left) > 0 {
					t.Errorf("run-local.sh left %v in TMPDIR", left)
				}
			}
			events, logLines := checkCILog(t, log, fail, want)
			m = validated.FindStringSubmatch(r.stdout)
			if m == nil || m[1] != strconv.Itoa(events) || m[2] != strconv.Itoa(logLines) {
				t.Errorf("lcwrap validate --mixed did not report %d valid, 0 invalid, %d log lines:\n%s", events, logLines, r)
			}
			if t.Failed() {
				t.Logf("run-local.sh:\n%s", r)
			}
		})
	}
}

// workflowStep is one step of a GitHub Actions workflow, as written.
type workflowStep struct {
	body string            // every line of the step
	env  map[string]string // its env: block
	run  string            // its run: | block, unindented
}

// workflowSteps reads the steps of lcwrap-tests.yml's one job by name:
// enough YAML for this file (each step starts "      - ", its keys are
// indented by 8 spaces and a block's lines by 10).
func workflowSteps(t *testing.T, wf string) map[string]workflowStep {
	t.Helper()
	steps := map[string]workflowStep{}
	for _, part := range strings.Split(wf, "\n      - ")[1:] {
		lines := strings.Split("  "+part, "\n")
		st := workflowStep{body: part, env: map[string]string{}}
		name := ""
		block := ""
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "  name: "), strings.HasPrefix(l, "  uses: ") && name == "":
				name = strings.TrimSpace(l[strings.Index(l, ":")+1:])
			case strings.HasPrefix(l, "        env:"):
				block = "env"
			case strings.HasPrefix(l, "        run: |"):
				block = "run"
			case strings.HasPrefix(l, "          ") && block == "env":
				k, v, _ := strings.Cut(strings.TrimSpace(l), ": ")
				st.env[k] = v
			case strings.HasPrefix(l, "          ") && block == "run":
				st.run += strings.TrimPrefix(l, "          ") + "\n"
			case strings.TrimSpace(l) == "" && block == "run":
				st.run += "\n"
			default:
				block = ""
			}
		}
		if name == "" {
			t.Fatalf("a workflow step without a name:\n%s", part)
		}
		steps[name] = st
	}
	return steps
}

// TestCIWorkflow checks that the workflow runs the steps run-local.sh
// runs (the workflow itself only runs on GitHub).
func TestCIWorkflow(t *testing.T) {
	b, err := os.ReadFile("ci/lcwrap-tests.yml")
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)
	for _, want := range []string{
		"set -o pipefail",
		"lcwrap --emit stderr ",
		"-- go test ./... 2>&1 | tee ci.log",
		"uses: actions/upload-artifact@",
		"lcwrap validate --mixed --require-events ci.log",
		"lcwrap status --file ci.log --mixed --all --json | jq -e '[.children[] | select(.endedAt)] | length > 0'",
	} {
		if !strings.Contains(wf, want) {
			t.Errorf("ci/lcwrap-tests.yml does not contain %q", want)
		}
	}
	// No module proxy serves lcwrap: a workflow that installs it from one
	// fails as written.
	for _, bad := range []string{"go install", "@latest"} {
		if strings.Contains(wf, bad) {
			t.Errorf("ci/lcwrap-tests.yml contains %q: lcwrap is built from its source", bad)
		}
	}
	steps := workflowSteps(t, wf)
	if !strings.Contains(steps["Upload the log"].body, "report.html") || !strings.Contains(steps["Report"].run, "lcwrap report --html report.html") {
		t.Errorf("ci/lcwrap-tests.yml: the Report step must write report.html and the upload must include it")
	}
	for _, name := range []string{"Report", "Upload the log", "Check the lifecycle lines"} {
		if !strings.Contains(steps[name].body, "\n        if: always()\n") {
			t.Errorf("ci/lcwrap-tests.yml: step %q must run when the tests fail (if: always())", name)
		}
	}
	local, err := os.ReadFile("ci/run-local.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"Build lcwrap", "Check the lifecycle lines"} {
		for _, l := range strings.Split(steps[step].run, "\n") {
			if cmd, ok := strings.CutPrefix(l, "lcwrap validate "); ok && !strings.Contains(string(local), "lcwrap validate "+cmd) {
				t.Errorf("run-local.sh does not run %q as the workflow does", l)
			}
			if strings.HasPrefix(l, "make ") && !strings.Contains(string(local), " build BIN=") {
				t.Errorf("run-local.sh does not build lcwrap with make build as the workflow does")
			}
		}
	}
	if strings.Contains(wf, "\t") {
		t.Errorf("ci/lcwrap-tests.yml contains a tab: YAML indentation must be spaces")
	}
}

// TestCIWorkflowBuild runs the workflow's Build step as written, with this
// checkout as LCWRAP_REPO and its HEAD as LCWRAP_REF: the lcwrap it builds
// works, and the step tells the next steps where it and the journal are.
func TestCIWorkflowBuild(t *testing.T) {
	b, err := os.ReadFile("ci/lcwrap-tests.yml")
	if err != nil {
		t.Fatal(err)
	}
	st := workflowSteps(t, string(b))["Build lcwrap"]
	if st.run == "" || st.env["LCWRAP_REPO"] == "" || st.env["LCWRAP_REF"] == "" {
		t.Fatalf("no Build lcwrap step with LCWRAP_REPO, LCWRAP_REF and a run block:\n%s", st.body)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	testtool.Need(t, "git", "apt-get install git")
	if out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").CombinedOutput(); err != nil {
		if testtool.CI() {
			t.Fatalf("CI: %s is not a git checkout, the Build step cannot be run: %v: %s", repo, err, out)
		}
		t.Skipf("%s is not a git checkout (%v): the Build step fetches from one", repo, err)
	}
	tmp := t.TempDir()
	ghPath, ghEnv := filepath.Join(tmp, "github_path"), filepath.Join(tmp, "github_env")
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", st.run)
	cmd.Env = append(os.Environ(),
		"LCWRAP_REPO="+repo, "LCWRAP_REF=HEAD",
		"RUNNER_TEMP="+tmp, "GITHUB_PATH="+ghPath, "GITHUB_ENV="+ghEnv)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Build step failed: %v\n%s", err, out)
	}
	bin := filepath.Join(tmp, "bin", "lcwrap")
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "lcwrap version ") {
		t.Fatalf("%s version: %v: %s", bin, err, out)
	}
	// Its exit code is the command's, as the Test step needs.
	if err := exec.Command(bin, "--no-journal", "--", "sh", "-c", "exit 3").Run(); err == nil || err.(*exec.ExitError).ExitCode() != 3 {
		t.Errorf("the built lcwrap did not exit 3 with its command: %v", err)
	}
	if p, _ := os.ReadFile(ghPath); string(p) != filepath.Join(tmp, "bin")+"\n" {
		t.Errorf("GITHUB_PATH got %q, want the bin directory", p)
	}
	if e, _ := os.ReadFile(ghEnv); string(e) != "LCWRAP_JOURNAL="+filepath.Join(tmp, "lcwrap", "journal.jsonl")+"\n" {
		t.Errorf("GITHUB_ENV got %q, want LCWRAP_JOURNAL in the runner's temp dir", e)
	}
}

// --- examples/hooks ---

// secrets are in the recorded payloads (prompts and messages); none may
// reach the journal, the hook's state or its messages.
var secrets = []string{
	"sk_live_51HxQmR2eZvKYlo2C8fTzq9Wb",
	"ghp_R2d2C3poBB8xYwLk7sTnQ1vZ9mJ4hG6eU0aF",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"AKIAIOSFODNN7EXAMPLE",
	"sk-ant-api03-Xq7vB2nL9pR4tY6wZ1cF8hJ3kM5sD0gA",
	"Tr0ub4dor&3",
	"Review the payment client", // a prompt is never copied, redacted or not
}

const (
	sessionID = "3f2b9c1e-8d4a-4b6e-9f0a-2c7d5e1b8a94"
	session   = "cc-" + sessionID
	explore   = session + ".a4e8f2c1"
	review    = session + ".b7d1e9a3"
	general   = session + ".c2f5a8d0"
	resumed   = explore + "+2"
)

// hook runs the example's hook (the thin wrapper of lcwrap hook
// claude-code) on one payload and checks it exited 0 without a word on
// stdout.
func (e *env) hook(extra []string, payload []byte) result {
	e.t.Helper()
	r := e.run(bytes.NewReader(payload), extra, "/bin/sh", "hooks/lcwrap-hook.sh")
	if r.code != 0 || r.stdout != "" {
		e.t.Errorf("the hook must exit 0 and print nothing on stdout:\n%s", r)
	}
	return r
}

func payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("hooks/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type statusDoc struct {
	Evidence bool `json:"evidence"`
	Children []struct {
		ChildID      string            `json:"childId"`
		State        string            `json:"state"`
		Display      string            `json:"display"`
		Source       string            `json:"source"`
		Capabilities map[string]string `json:"capabilities"`
		Lineage      struct {
			External bool `json:"external"`
		} `json:"lineage"`
	} `json:"children"`
}

func (e *env) status(journal string) statusDoc {
	e.t.Helper()
	r := e.lcwrap(nil, "status", "--all", "--json", "--journal", journal)
	var doc statusDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil {
		e.t.Fatalf("lcwrap status --all --json: %v\n%s", err, r)
	}
	return doc
}

func TestHooksExample(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal.jsonl")
	env := []string{"LCWRAP_JOURNAL=" + journal}
	names, err := filepath.Glob("hooks/testdata/*.json")
	if err != nil || len(names) < 10 {
		t.Fatalf("recorded payloads: %v %v", names, err)
	}
	var stderr strings.Builder
	for _, path := range names {
		name := filepath.Base(path)
		r := e.hook(env, payload(t, name))
		stderr.WriteString(r.stderr)
		switch {
		case strings.HasPrefix(name, "04-malformed"):
			if !strings.Contains(r.stderr, "unreadable hook payload") || !strings.Contains(r.stderr, "not recorded") {
				t.Errorf("%s: the hook did not say the payload is unreadable: %q", name, r.stderr)
			}
		case r.stderr != "":
			t.Errorf("%s: unexpected stderr %q", name, r.stderr)
		}
		if strings.HasPrefix(name, "03-") {
			// Two sub-agents at work: running, under a session that started.
			states := map[string]string{}
			for _, c := range e.status(journal).Children {
				states[c.ChildID] = c.State
			}
			if want := map[string]string{session: "starting", explore: "running", review: "running"}; !maps.Equal(states, want) {
				t.Fatalf("after %s: status %v, want %v", name, states, want)
			}
		}
	}

	// The journal checks out.
	if r := e.lcwrap(nil, "journal", "verify", "--journal", journal); r.code != 0 || !strings.Contains(r.stdout, "clean") {
		t.Errorf("lcwrap journal verify:\n%s", r)
	}
	if r := e.lcwrap(nil, "validate", journal); r.code != 0 || !strings.Contains(r.stdout, " valid, 0 invalid") {
		t.Errorf("lcwrap validate:\n%s", r)
	}

	// Every row is external; the reported ends are completed, what the
	// session's end left open is lost.
	states := map[string]string{}
	for _, c := range e.status(journal).Children {
		states[c.ChildID] = c.State
		if !c.Lineage.External || c.Source != "claude-code" || c.Capabilities["heartbeat"] != "unknown" || c.Capabilities["cancel"] != "unknown" {
			t.Errorf("status row %s: external %v source %q capabilities %v", c.ChildID, c.Lineage.External, c.Source, c.Capabilities)
		}
	}
	want := map[string]string{session: "completed", explore: "completed", review: "completed", resumed: "lost", general: "lost"}
	if !maps.Equal(states, want) {
		t.Errorf("children %v, want %v", states, want)
	}

	// The events say what a hook can know, and claim nothing more.
	evs := readEvents(t, journal)
	terminals := map[string]event{}
	var again bool
	for _, ev := range evs {
		if !ev.Lineage.External || ev.Lineage.AdoptedAt == "" {
			t.Errorf("%s %s: lineage %+v: want external with adoptedAt", ev.ChildID, ev.Kind, ev.Lineage)
		}
		if ev.ChildID != session && ev.Lineage.ParentChildID != session {
			t.Errorf("%s: parent %q, want the session %s", ev.ChildID, ev.Lineage.ParentChildID, session)
		}
		switch ev.Kind {
		case "created":
			if ev.Details["observation"] != "agent-report" || ev.Details["limits"] == nil || ev.Details["sessionId"] != sessionID {
				t.Errorf("%s created: details %v", ev.ChildID, ev.Details)
			}
		case "terminal":
			if _, dup := terminals[ev.ChildID]; dup {
				t.Errorf("%s: a second terminal event", ev.ChildID)
			}
			terminals[ev.ChildID] = ev
		case "diagnostic":
			again = again || ev.ChildID == review && ev.Details["evidence"] == "SubagentStop"
		}
	}
	for id, claim := range map[string]string{session: "agent-reported-end", explore: "agent-reported-end", general: "session-ended", resumed: "session-ended"} {
		if got := terminals[id].Details["claim"]; got != claim {
			t.Errorf("%s ended with claim %v, want %s", id, got, claim)
		}
	}
	if r := terminals[session].Details["reason"]; r != "prompt_input_exit" {
		t.Errorf("SessionEnd's reason %v", r)
	}
	if !again {
		t.Error("a second SubagentStop for an ended sub-agent is not a diagnostic")
	}

	// Nothing secret anywhere: journal, hook state, hook messages.
	found := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			for _, s := range secrets {
				if bytes.Contains(b, []byte(s)) {
					found[s] = path
				}
			}
		}
		return nil
	})
	for _, s := range secrets {
		if strings.Contains(stderr.String(), s) {
			found[s] = "the hook's stderr"
		}
	}
	for s, where := range found {
		t.Errorf("secret %q from a payload reached %s", s, where)
	}
	if _, err := os.Stat(filepath.Join(dir, "journal.jsonl.agents", "claude-code", sessionID+".json")); err != nil {
		t.Errorf("the session's state: %v", err)
	}
}

// TestHookNeverFails: whatever is wrong around it, the hook exits 0, says
// nothing on stdout, changes nothing it should not, and drops nothing
// silently.
func TestHookNeverFails(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal.jsonl")
	env := []string{"LCWRAP_JOURNAL=" + journal}
	start := payload(t, "02-subagent-start-explore.json")

	r := e.hook(append(slices.Clip(env), "LCWRAP_BIN=/nonexistent/lcwrap"), start)
	if !strings.Contains(r.stderr, "lcwrap not found") {
		t.Errorf("no lcwrap: stderr %q", r.stderr)
	}
	for _, p := range []string{"", "[]", `"SubagentStart"`, `{"hook_event_name":"SubagentStart"}`, `{"session_id":"s1","hook_event_name":"SubagentStart"}`} {
		r := e.hook(env, []byte(p))
		if r.stderr == "" && p != `{"session_id":"s1","hook_event_name":"SubagentStart"}` {
			t.Errorf("payload %q: the hook said nothing about skipping it", p)
		}
	}

	// An odd session id is checksummed into a plain child id.
	odd := []byte(`{"session_id":"../../etc x\u0007","hook_event_name":"SessionStart","source":"startup"}`)
	e.hook(env, odd)
	var oddID string
	for _, ev := range readEvents(t, journal) {
		if ev.Kind == "created" && strings.Contains(ev.Details["sessionId"].(string), "etc") {
			oddID = ev.ChildID
		}
	}
	if !regexp.MustCompile(`^cc-h[0-9a-f]{16}$`).MatchString(oddID) {
		t.Errorf("child id for an odd session id: %q", oddID)
	}

	// A journal lock held by a live process: the hook gives up after its
	// lock timeout, exits 0, leaves the journal as it was, says so, and
	// writes the event with the next call.
	lock := journal + ".lock"
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	owner := fmt.Sprintf(`{"pid":%d,"token":"examples-test","createdAt":%d}`, os.Getpid(), time.Now().UnixMilli())
	if err := os.WriteFile(filepath.Join(lock, "owner.json"), []byte(owner), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(journal)
	r = e.hook(env, []byte(`{"session_id":"../../etc x\u0007","hook_event_name":"Stop"}`))
	if !strings.Contains(r.stderr, "kept for the next hook call") {
		t.Errorf("journal lock held by a live process: stderr %q", r.stderr)
	}
	if after, _ := os.ReadFile(journal); !bytes.Equal(before, after) {
		t.Errorf("the hook wrote to the journal while another process held its lock")
	}
	if err := os.RemoveAll(lock); err != nil {
		t.Fatal(err)
	}
	r = e.hook(env, []byte(`{"session_id":"../../etc x\u0007","hook_event_name":"SessionEnd","reason":"other"}`))
	if r.stderr != "" {
		t.Errorf("after the lock was released: stderr %q", r.stderr)
	}
	var seqs []int
	for _, ev := range readEvents(t, journal) {
		if ev.ChildID == oddID {
			seqs = append(seqs, ev.Sequence)
		}
	}
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("the kept events were not written in order: sequences %v", seqs)
		}
	}
	if len(seqs) < 5 {
		t.Errorf("the kept events were lost: sequences %v", seqs)
	}
}

// TestHookInsideLcwrap: under an lcwrap that does not own the agent's
// events (--agent none), the session is a child of the launched claude.
func TestHookInsideLcwrap(t *testing.T) {
	e := newEnv(t)
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	env := []string{"LCWRAP_JOURNAL=" + journal, "LCWRAP_CHILD_ID=claude-1", "LCWRAP_ROOT_CHILD_ID=claude-1"}
	e.hook(env, payload(t, "01-session-start.json"))
	e.hook(env, payload(t, "02-subagent-start-explore.json"))
	for _, ev := range readEvents(t, journal) {
		wantParent := map[string]string{session: "claude-1", explore: session}[ev.ChildID]
		if ev.Lineage.ParentChildID != wantParent || ev.Lineage.RootChildID != "claude-1" {
			t.Errorf("%s %s: parent %q root %q, want parent %q root claude-1", ev.ChildID, ev.Kind, ev.Lineage.ParentChildID, ev.Lineage.RootChildID, wantParent)
		}
	}
	// Under an lcwrap that owns the events, the hook records nothing.
	before, _ := os.ReadFile(journal)
	e.hook(append(env, "LCWRAP_HOOK_URL=http://127.0.0.1:1/hook"), payload(t, "08-stop.json"))
	if after, _ := os.ReadFile(journal); !bytes.Equal(before, after) {
		t.Error("the hook recorded a payload the launching lcwrap owns")
	}
}

// TestHooksDemo runs the example's own demo script.
func TestHooksDemo(t *testing.T) {
	e := newEnv(t)
	r := e.run(nil, nil, "hooks/demo.sh")
	if r.code != 0 {
		t.Fatalf("hooks/demo.sh:\n%s", r)
	}
	for _, want := range []string{"13-session-end.json (SessionEnd): exit 0", "clean: ", " valid, 0 invalid", "claude-code (external)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("hooks/demo.sh output lacks %q:\n%s", want, r)
		}
	}
	if left, _ := os.ReadDir(e.tmp); len(left) > 0 {
		t.Errorf("hooks/demo.sh left %v in TMPDIR", left)
	}
}

// TestHooksSettings checks that settings.json registers lcwrap hook
// claude-code for the events lcwrap --print-settings registers, and is
// JSON.
func TestHooksSettings(t *testing.T) {
	b, err := os.ReadFile("hooks/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("hooks/settings.json: %v", err)
	}
	printed := e2eSettings(t)
	var events []string
	for ev, groups := range s.Hooks {
		events = append(events, ev)
		if len(groups) != 1 || groups[0].Matcher != "" || len(groups[0].Hooks) != 1 ||
			groups[0].Hooks[0].Type != "command" || groups[0].Hooks[0].Command != "lcwrap hook claude-code" || groups[0].Hooks[0].Timeout <= 0 {
			t.Errorf("%s: %+v, want one command hook running lcwrap hook claude-code for every matcher, with a timeout", ev, groups)
		}
	}
	slices.Sort(events)
	if !slices.Equal(events, printed) {
		t.Errorf("events %v, want those of --print-settings %v", events, printed)
	}
}

// e2eSettings lists the events `lcwrap hook claude-code --print-settings`
// registers.
func e2eSettings(t *testing.T) []string {
	t.Helper()
	e := newEnv(t)
	r := e.lcwrap(nil, "hook", "claude-code", "--print-settings")
	var s struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); r.code != 0 || err != nil {
		t.Fatalf("--print-settings: %v\n%s", err, r)
	}
	return slices.Sorted(maps.Keys(s.Hooks))
}

// --- examples/adopt ---

func TestAdoptExample(t *testing.T) {
	e := newEnv(t)
	r := e.run(nil, []string{"KEEP=1"}, "adopt/run.sh")
	if r.code != 0 || !strings.Contains(r.stdout, "adopt-example: PASS") {
		t.Fatalf("adopt/run.sh:\n%s", r)
	}
	// The README shows this run's output (KEEP=1 adds a last line).
	shown, _, _ := strings.Cut(r.stdout, "adopt-example: kept ")
	doccapture.Check(t, "adopt/README.md", "adopt-run", strings.ReplaceAll(shown, e.tmp, "/tmp"))
	for _, want := range []string{
		"the server's exit status, as its parent sees it: 7",
		"got SIGTERM and exited 143",
		"is still running; its parent stops it",
		"lcwrap: api is lost: its process (pid ",
		"  web TERM\n  api TERM\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("adopt/run.sh output lacks %q", want)
		}
	}
	for _, c := range []string{"web", "api"} {
		if !regexp.MustCompile(`(?m)^` + c + ` +◎ observed +`).MatchString(r.stdout) {
			t.Errorf("lcwrap status did not show %s as observed", c)
		}
	}
	if !regexp.MustCompile(`(?m)^web +◌ lost +\?5 +— +— +\S+ +\S+ +unknown +lcwrap \(adopted\)`).MatchString(r.stdout) {
		t.Errorf("lcwrap status --all did not show web as lost, exit unknown, adopted")
	}

	dirs, _ := filepath.Glob(filepath.Join(e.tmp, "lcwrap-adopt-example.*"))
	if len(dirs) != 1 {
		t.Fatalf("KEEP=1 kept %v, want one directory", dirs)
	}
	byChild := map[string][]event{}
	for _, ev := range readEvents(t, filepath.Join(dirs[0], "journal.jsonl")) {
		byChild[ev.ChildID] = append(byChild[ev.ChildID], ev)
	}
	kinds := func(evs []event) (s []string) {
		for _, ev := range evs {
			s = append(s, ev.Kind+"/"+ev.State)
		}
		return s
	}
	web, api := byChild["web"], byChild["api"]
	if got, want := kinds(web), []string{"created/created", "diagnostic/", "terminal/lost"}; !slices.Equal(got, want) {
		t.Fatalf("web's events %v, want %v", got, want)
	}
	if got, want := kinds(api), []string{"created/created", "diagnostic/", "diagnostic/", "terminal/lost"}; !slices.Equal(got, want) {
		t.Fatalf("api's events %v, want %v", got, want)
	}
	for _, ev := range append(web, api...) {
		if !ev.Lineage.External || ev.Lineage.AdoptedAt == "" || !allUnknown(ev.Capabilities) {
			t.Errorf("%s %s: lineage %+v capabilities %v, want external, adoptedAt, all unknown", ev.ChildID, ev.Kind, ev.Lineage, ev.Capabilities)
		}
	}
	if web[0].Details["observation"] != "process-presence" || web[0].Details["pid"] == nil || web[0].Details["startTime"] == nil {
		t.Errorf("web created: %v", web[0].Details)
	}
	if web[1].Details["limits"] == nil {
		t.Errorf("web's diagnostic does not state the limits: %v", web[1].Details)
	}
	if d := web[2].Details; d["exitStatus"] != "unknown" || d["exit"] != nil || d["observation"] != "process-exited" {
		t.Errorf("web terminal: %v, want exitStatus unknown and no exit code", d)
	}
	if d := api[2].Details; d["observation"] != "ended" || d["processState"] != "unknown" {
		t.Errorf("api's event after adopt stopped: %v, want observation ended, processState unknown", d)
	}
	if ev := api[3]; ev.Source != "lcwrap-reconcile" || ev.Details["exitStatus"] != "unknown" {
		t.Errorf("api's terminal event: source %q details %v, want lcwrap-reconcile, exitStatus unknown", ev.Source, ev.Details)
	}
}
