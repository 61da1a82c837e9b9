// Command claudefleet measures what `lcwrap adopt --agent claude-code`
// costs while nothing happens (issue 27), for bench/claudefleet.sh (it is
// not part of lcwrap): one real background session (`claude --bg`
// against internal/anthropicmock on 127.0.0.1, its credential through an
// apiKeyHelper) beside 50 synthetic ones (job directories with a
// state.json and pid registry files), in a HOME of its own; once the
// follower has recorded them and the registry is quiet, the CPU it spends
// over the idle window: its own threads' time on a CPU
// (/proc/PID/task/*/schedstat, nanoseconds) plus its reaped children's
// (`claude agents --json` listings: cutime+cstime, clock ticks), the
// listings it made (counted by a `claude` shim on its PATH) and the
// changes the registry's directories saw meanwhile (an inotify watch of
// this program's own). Beside it, the same window for an idle Go process
// of the same shape: this program re-run with -floor, which subscribes
// SIGINT/SIGTERM and blocks on an inotify descriptor in the runtime's
// poller, as the follower does. Prints markdown rows.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/bench/internal/procstat"
	"github.com/lcwrap/lcwrap/internal/anthropicmock"
)

var (
	lcwrap    = flag.String("lcwrap", "bin/lcwrap", "lcwrap binary")
	synthetic = flag.Int("synthetic", 50, "synthetic background sessions")
	idle      = flag.Duration("idle", time.Minute, "measuring window")
	tmp       = flag.String("tmp", os.TempDir(), "scratch directory")
	floor     = flag.Bool("floor", false, "be the idle Go floor (internal)")
	shimOf    = flag.String("shim", "", "be `claude`: run this claude, add the synthetic sessions of -synthetic-list to what `agents --json` prints (internal)")
	verbose   = flag.Bool("v", false, "say on stderr when the registry changed and when the follower listed")
	keep      = flag.Bool("keep", false, "keep the scratch directory (its HOME, the journal)")
	prompt    = flag.String("prompt", "say hello", "the real session's prompt")
	synthList = flag.String("synthetic-list", "", "with -shim: a JSON array of sessions")
)

const apiKey = "sk-ant-test-000000000000000000000000"

func main() {
	flag.Parse()
	if *floor {
		floorProcess()
		return
	}
	if *shimOf != "" {
		os.Exit(shim(*shimOf, *synthList, flag.Args()))
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "claudefleet:", err)
		os.Exit(1)
	}
}

// floorProcess is an idle Go process shaped like the follower: signals
// subscribed, one goroutine blocked reading an inotify descriptor.
func floorProcess() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	quiet, err := os.MkdirTemp("", "claudefleet-floor.")
	if err != nil {
		return
	}
	defer os.Remove(quiet)
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err == nil {
		unix.InotifyAddWatch(fd, quiet, unix.IN_CREATE)
		f := os.NewFile(uintptr(fd), "inotify")
		go func() {
			b := make([]byte, 4096)
			for {
				if _, err := f.Read(b); err != nil {
					return
				}
			}
		}()
	}
	<-sigs
}

func run() error {
	claude, err := exec.LookPath("claude")
	if err != nil {
		return fmt.Errorf("claude is not installed (npm install -g @anthropic-ai/claude-code@2.1.332)")
	}
	lw, err := filepath.Abs(*lcwrap)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(*tmp, "claudefleet.")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	home, project, shim := filepath.Join(dir, "home"), filepath.Join(dir, "project"), filepath.Join(dir, "bin")
	cfg := filepath.Join(home, ".claude")
	for _, d := range []string{cfg, project, shim, filepath.Join(cfg, "sessions"), filepath.Join(cfg, "jobs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	mock, err := anthropicmock.Start()
	if err != nil {
		return err
	}
	defer mock.Close()
	onboarded, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}},
		"projects":               map[string]any{project: map[string]any{"hasTrustDialogAccepted": true}},
	})
	os.WriteFile(filepath.Join(home, ".claude.json"), onboarded, 0o600)
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"apiKeyHelper":"echo `+apiKey+`"}`), 0o600)
	// The shim counts the follower's listings, then is claude, its
	// listing with the synthetic sessions added.
	calls, synth := filepath.Join(dir, "listings"), filepath.Join(dir, "synthetic.json")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	os.WriteFile(filepath.Join(shim, "claude"), []byte("#!/bin/sh\ndate +%T.%N >> '"+calls+"'\nexec '"+self+"' -shim '"+claude+"' -synthetic-list '"+synth+"' -- \"$@\"\n"), 0o755)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" || k == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "ANTHROPIC_BASE_URL="+mock.URL, "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "PATH="+shim+":"+os.Getenv("PATH"))

	// The synthetic sessions: a job directory and a registry file each,
	// blocked, idle; their pids are this program's (alive).
	var entries []map[string]any
	for i := range *synthetic {
		entries = append(entries, map[string]any{"pid": os.Getpid(), "id": fmt.Sprintf("job%05d", i), "cwd": project,
			"kind": "background", "sessionId": fmt.Sprintf("synthetic-%d", i), "status": "idle", "state": "blocked"})
		id := fmt.Sprintf("job%05d", i)
		os.MkdirAll(filepath.Join(cfg, "jobs", id), 0o700)
		os.WriteFile(filepath.Join(cfg, "jobs", id, "state.json"),
			[]byte(fmt.Sprintf(`{"state":"blocked","tempo":"idle","sessionId":"synthetic-%d"}`, i)), 0o600)
		os.WriteFile(filepath.Join(cfg, "sessions", fmt.Sprintf("%d.json", 4000000+i)),
			[]byte(fmt.Sprintf(`{"pid":%d,"sessionId":"synthetic-%d","status":"idle","kind":"background"}`, os.Getpid(), i)), 0o600)
	}

	eb, _ := json.Marshal(entries)
	os.WriteFile(synth, eb, 0o600)

	changes, stopChanges := recordChanges(filepath.Join(cfg, "sessions"), filepath.Join(cfg, "jobs"))
	defer stopChanges()

	// The real session.
	bg := exec.Command(claude, "--bg", "--allowedTools=Bash", *prompt)
	bg.Dir, bg.Env = project, env
	out, err := bg.CombinedOutput()
	m := regexp.MustCompile(`backgrounded · ([0-9a-z]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		return fmt.Errorf("claude --bg: %v\n%s", err, out)
	}
	id := string(m[1])
	defer func() {
		stop := exec.Command(claude, "stop", id)
		stop.Dir, stop.Env = project, env
		stop.Run()
	}()
	// Its turn over: claude agents lists it idle.
	var listed []byte
	if err := until(90*time.Second, func() bool {
		c := exec.Command(claude, "agents", "--json")
		c.Dir, c.Env = project, env
		listed, _ = c.CombinedOutput()
		var es []struct{ Status string }
		return json.Unmarshal(listed, &es) == nil && len(es) == 1 && es[0].Status == "idle"
	}); err != nil {
		return fmt.Errorf("the real session never went idle: %v\n%s", err, listed)
	}

	fl := exec.Command(self, "-floor")
	if err := fl.Start(); err != nil {
		return err
	}
	defer func() { fl.Process.Signal(syscall.SIGINT); fl.Wait() }()
	journal := filepath.Join(dir, "journal.jsonl")
	ad := exec.Command(lw, "adopt", "--agent", "claude-code", "--journal", journal)
	ad.Dir, ad.Env = project, env
	var errb bytes.Buffer
	ad.Stderr = &errb
	if err := ad.Start(); err != nil {
		return err
	}
	defer func() { ad.Process.Signal(syscall.SIGINT); ad.Wait() }()
	// Settled: for 10 s, no change in the registry, no listing begun and
	// the journal not grown (a listing runs 200 ms after a change and
	// takes half a second to a few seconds here).
	type mark struct {
		journal int64
		listed  int
		changes int
	}
	var last mark
	since := time.Now()
	if err := until(3*time.Minute, func() bool {
		st, _ := os.Stat(journal)
		m := mark{listed: lines(calls), changes: len(changes())}
		if st != nil {
			m.journal = st.Size()
		}
		if m != last {
			last, since = m, time.Now()
		}
		return last.journal > 0 && time.Since(since) > 10*time.Second
	}); err != nil {
		return fmt.Errorf("the follower never settled: %v\n%s", err, errb.String())
	}
	real := 0
	jb, _ := os.ReadFile(journal)
	if bytes.Contains(jb, []byte(`"sessionId":"`)) {
		for _, l := range bytes.Split(jb, []byte("\n")) {
			if bytes.Contains(l, []byte(`"kind":"created"`)) && bytes.Contains(l, []byte(`"source":"claude-code"`)) {
				real++
			}
		}
	}

	// The idle window, the floor process beside it.
	listed0 := lines(calls)
	a0, c0 := cpu(ad.Process.Pid), cpu(fl.Process.Pid)
	ch0 := children(ad.Process.Pid)
	t0 := time.Now()
	time.Sleep(*idle)
	a1, c1 := cpu(ad.Process.Pid), cpu(fl.Process.Pid)
	ch1 := children(ad.Process.Pid)
	el := time.Since(t0)
	perMin := func(d time.Duration) float64 {
		return float64(d.Nanoseconds()) / 1e6 * float64(time.Minute) / float64(el)
	}
	n := 0
	for _, c := range changes() {
		if !c.at.Before(t0) && !c.at.After(t0.Add(el)) {
			n++
		}
		if *verbose {
			fmt.Fprintf(os.Stderr, "%s change %s %#x\n", c.at.Format("15:04:05.000"), c.name, c.mask)
		}
	}
	if *verbose {
		b, _ := os.ReadFile(calls)
		fmt.Fprintf(os.Stderr, "window %s–%s; listings at:\n%s", t0.Format("15:04:05.000"), t0.Add(el).Format("15:04:05.000"), b)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("| %d synthetic + 1 real (%d recorded) | %.2f | %.2f | %.2f | %d | %d | %s |\n",
		*synthetic, real, perMin(a1-a0), perMin(a1-a0+ch1-ch0), perMin(c1-c0), lines(calls)-listed0, n,
		strings.Join(strings.Fields(string(load))[:3], " "))
	return nil
}

// shim runs claude with args; for `agents --json` it adds the sessions
// of synthFile to the array claude printed.
func shim(claude, synthFile string, args []string) int {
	c := exec.Command(claude, args...)
	c.Stdin, c.Stderr = os.Stdin, os.Stderr
	if len(args) != 2 || args[0] != "agents" || args[1] != "--json" {
		c.Stdout = os.Stdout
		if err := c.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			return 127
		}
		return 0
	}
	out, err := c.Output()
	if err != nil {
		os.Stdout.Write(out)
		return 1
	}
	var real, synth []json.RawMessage
	if err := json.Unmarshal(out, &real); err != nil {
		os.Stdout.Write(out)
		return 0
	}
	b, _ := os.ReadFile(synthFile)
	json.Unmarshal(b, &synth)
	all, _ := json.Marshal(append(real, synth...))
	os.Stdout.Write(append(all, '\n'))
	return 0
}

// children is the CPU of a process's reaped children (cutime+cstime).
func children(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// fields after the name: state is f[0]; cutime and cstime are the
	// 16th and 17th of the whole line, f[13] and f[14] here.
	cu, _ := strconv.ParseInt(f[13], 10, 64)
	cs, _ := strconv.ParseInt(f[14], 10, 64)
	return time.Duration(cu+cs) * time.Second / 100 // USER_HZ
}

func lines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// change is one inotify event in the registry's directories.
type change struct {
	at   time.Time
	name string
	mask uint32
}

// recordChanges records every change of dirs from now on, until stop.
func recordChanges(dirs ...string) (get func() []change, stop func()) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return func() []change { return nil }, func() {}
	}
	for _, d := range dirs {
		unix.InotifyAddWatch(fd, d, unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO)
	}
	var mu sync.Mutex
	var all []change
	go func() {
		b := make([]byte, 1<<16)
		for {
			k, err := unix.Read(fd, b)
			if err != nil || k <= 0 {
				return
			}
			now := time.Now()
			mu.Lock()
			for off := 0; off+unix.SizeofInotifyEvent <= k; {
				mask := binary.NativeEndian.Uint32(b[off+4:])
				l := int(binary.NativeEndian.Uint32(b[off+12:]))
				name := strings.TrimRight(string(b[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l]), "\x00")
				all = append(all, change{now, name, mask})
				off += unix.SizeofInotifyEvent + l
			}
			mu.Unlock()
		}
	}()
	return func() []change { mu.Lock(); defer mu.Unlock(); return slices.Clone(all) }, func() { unix.Close(fd) }
}

func until(d time.Duration, cond func() bool) error {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("still not after %s", d)
		}
	}
	return nil
}

// cpu is the CPU time of every thread of pid so far (0 once it is gone).
func cpu(pid int) time.Duration {
	d, _ := procstat.CPU(pid)
	return d
}
