// Command waitbench measures `lcwrap wait` and `lcwrap watch --exec` (issue
// 25; it is not part of lcwrap).
//
// latency: for each of -n children, waitbench appends the child's running
// event, starts `lcwrap wait CHILD`, an inotify-based peer (`tail -n0 -F
// JOURNAL | grep -m1 PATTERN`, tail and grep started by waitbench and
// joined by a pipe, grep's exit being the moment) and has one `lcwrap
// watch --exec` running throughout; after -settle it appends the child's
// terminal event and measures, from the moment the append returned, the
// time until wait exits, until grep exits and until watch's command has
// run (the command echoes the event id, read from watch's stdout). Prints
// markdown rows: median, p90 and max per tool.
//
// memory: one `lcwrap watch --exec 'sleep 1'` while waitbench appends -rate
// transitions a second (children toggling running and waiting) for -for;
// it samples watch's RSS every second and prints one row: RSS after the
// first seconds, at the end and at most, the commands run, the
// transitions dropped.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

var (
	lcwrap = flag.String("lcwrap", "bin/lcwrap", "lcwrap binary")
	mode   = flag.String("mode", "latency", "latency or memory")
	n      = flag.Int("n", 50, "latency: children measured")
	settle = flag.Duration("settle", 400*time.Millisecond, "latency: time given to the watchers to start before the terminal event")
	rate   = flag.Int("rate", 1000, "memory: transitions a second")
	dur    = flag.Duration("for", 60*time.Second, "memory: how long")
	kids   = flag.Int("children", 100, "memory: children toggling")
	tmp    = flag.String("tmp", os.TempDir(), "scratch directory")
)

func main() {
	flag.Parse()
	var err error
	switch *mode {
	case "latency":
		err = latency()
	case "memory":
		err = memory()
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "waitbench:", err)
		os.Exit(1)
	}
}

// writer appends events to a journal, numbering each child's events.
type writer struct {
	j    *journal.Journal
	seqs map[string]int64
}

func newWriter(path string) (*writer, error) {
	j, err := journal.Open(path, journal.Options{Fsync: journal.FsyncNever})
	if err != nil {
		return nil, err
	}
	return &writer{j: j, seqs: map[string]int64{}}, nil
}

func (w *writer) event(child string, kind event.Kind, state event.State, details string) []byte {
	w.seqs[child]++
	seq := w.seqs[child]
	e := event.Event{SchemaVersion: 1, EventID: fmt.Sprintf("bench/%s/%d", child, seq), Source: "bench", SourceEpoch: "bench",
		ChildID: child, Lineage: event.Lineage{RootChildID: child}, Kind: kind, State: state,
		ObservedAt: event.Timestamp(time.Now()), Sequence: event.Int64(seq), Capabilities: event.Capabilities{}.Normalize()}
	if details != "" {
		e.Details = []byte(details)
	}
	b, err := e.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

func (w *writer) append(lines ...[]byte) error {
	_, err := w.j.Append(lines, false)
	return err
}

func latency() error {
	dir, err := os.MkdirTemp(*tmp, "waitbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "journal.jsonl")
	w, err := newWriter(path)
	if err != nil {
		return err
	}
	defer w.j.Close()
	w.append(w.event("warm", event.KindCreated, event.StateCreated, ""))

	// One watcher throughout: its command echoes the event id.
	watch := exec.Command(*lcwrap, "watch", "--journal", path, "--for", "completed", "--no-cursor", "--exec", `echo "$LCWRAP_WATCH_EVENT_ID"`)
	out, err := watch.StdoutPipe()
	if err != nil {
		return err
	}
	watchErr, _ := watch.StderrPipe()
	if err := watch.Start(); err != nil {
		return err
	}
	defer func() { watch.Process.Signal(syscall.SIGTERM); watch.Wait() }()
	ready := make(chan struct{})
	go func() {
		r := bufio.NewReader(watchErr)
		once := sync.Once{}
		for {
			l, err := r.ReadString('\n')
			if strings.Contains(l, "following") {
				once.Do(func() { close(ready) })
			}
			if err != nil {
				return
			}
		}
	}()
	<-ready
	ran := map[string]chan time.Time{}
	var mu sync.Mutex
	chanOf := func(id string) chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		if ran[id] == nil {
			ran[id] = make(chan time.Time, 1)
		}
		return ran[id]
	}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			chanOf(strings.TrimSpace(s.Text())) <- time.Now()
		}
	}()

	var lw, lg, lx []time.Duration
	for i := 0; i < *n; i++ {
		child := fmt.Sprintf("c%d", i)
		if err := w.append(w.event(child, event.KindCreated, event.StateCreated, ""),
			w.event(child, event.KindStateChanged, event.StateStarting, ""),
			w.event(child, event.KindStateChanged, event.StateRunning, "")); err != nil {
			return err
		}
		wait := exec.Command(*lcwrap, "wait", "--journal", path, child)
		if err := wait.Start(); err != nil {
			return err
		}
		tail := exec.Command("tail", "-n0", "-F", path)
		grep := exec.Command("grep", "-m1", "-q", `"childId":"`+child+`".*"kind":"terminal"`)
		pipe, err := tail.StdoutPipe()
		if err != nil {
			return err
		}
		grep.Stdin = pipe
		if err := tail.Start(); err != nil {
			return err
		}
		if err := grep.Start(); err != nil {
			return err
		}
		time.Sleep(*settle)
		terminal := w.event(child, event.KindTerminal, event.StateCompleted, `{"exit":{"code":0},"claim":"process-exit-status-only"}`)
		id := fmt.Sprintf("bench/%s/%d", child, w.seqs[child])
		if err := w.append(terminal); err != nil {
			return err
		}
		at := time.Now()
		var wg sync.WaitGroup
		var dw, dg time.Duration
		wg.Add(2)
		go func() { defer wg.Done(); wait.Wait(); dw = time.Since(at) }()
		go func() { defer wg.Done(); grep.Wait(); dg = time.Since(at) }()
		wg.Wait()
		tail.Process.Kill()
		tail.Wait()
		if wait.ProcessState.ExitCode() != 0 {
			return fmt.Errorf("lcwrap wait %s exited %d", child, wait.ProcessState.ExitCode())
		}
		select {
		case t := <-chanOf(id):
			lx = append(lx, t.Sub(at))
		case <-time.After(10 * time.Second):
			return fmt.Errorf("watch never ran its command for %s", id)
		}
		lw, lg = append(lw, dw), append(lg, dg)
	}
	fmt.Println("| tool | n | median (ms) | p90 (ms) | max (ms) | command |")
	fmt.Println("|---|---|---|---|---|---|")
	row("lcwrap wait (exits)", lw, "`lcwrap wait CHILD`")
	row("tail -F \\| grep -m1 (grep exits)", lg, "`tail -n0 -F JOURNAL \\| grep -m1 -q PATTERN`")
	row("lcwrap watch --exec (command ran)", lx, "`lcwrap watch --for completed --exec 'echo \"$LCWRAP_WATCH_EVENT_ID\"'`")
	fmt.Printf("\nRatio of medians, wait / tail|grep: **%.2f×**.\n", float64(median(lw))/float64(max(median(lg), 1)))
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func row(name string, d []time.Duration, cmd string) {
	s := slices.Clone(d)
	slices.Sort(s)
	ms := func(x time.Duration) string { return strconv.FormatFloat(float64(x.Microseconds())/1000, 'f', 2, 64) }
	fmt.Printf("| %s | %d | %s | %s | %s | %s |\n", name, len(s), ms(s[len(s)/2]), ms(s[len(s)*9/10]), ms(s[len(s)-1]), cmd)
}

var vmRSS = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`)

func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := vmRSS.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no VmRSS")
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb, nil
}

func memory() error {
	dir, err := os.MkdirTemp(*tmp, "waitbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "journal.jsonl")
	w, err := newWriter(path)
	if err != nil {
		return err
	}
	defer w.j.Close()
	var lines [][]byte
	for i := 0; i < *kids; i++ {
		c := fmt.Sprintf("k%d", i)
		lines = append(lines, w.event(c, event.KindCreated, event.StateCreated, ""), w.event(c, event.KindStateChanged, event.StateStarting, ""),
			w.event(c, event.KindStateChanged, event.StateRunning, ""))
	}
	if err := w.append(lines...); err != nil {
		return err
	}
	watch := exec.Command(*lcwrap, "watch", "--journal", path, "--for", "running,waiting", "--no-cursor", "--exec", "sleep 1")
	stderr, _ := watch.StderrPipe()
	if err := watch.Start(); err != nil {
		return err
	}
	var summary string
	var mu sync.Mutex
	ready := make(chan struct{})
	go func() {
		r := bufio.NewReader(stderr)
		once := sync.Once{}
		for {
			l, err := r.ReadString('\n')
			if strings.Contains(l, "following") {
				once.Do(func() { close(ready) })
			}
			if strings.Contains(l, "ran ") && strings.Contains(l, "commands") {
				mu.Lock()
				summary = strings.TrimSpace(l)
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	<-ready
	state := map[string]event.State{}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	sample := time.NewTicker(time.Second)
	defer sample.Stop()
	start := time.Now()
	perTick := *rate / 100
	next := 0
	sent := 0
	var samples []int64
	for time.Since(start) < *dur {
		select {
		case <-tick.C:
			var batch [][]byte
			for range perTick {
				c := fmt.Sprintf("k%d", next%*kids)
				next++
				st := event.StateWaiting
				if state[c] == event.StateWaiting {
					st = event.StateRunning
				}
				state[c] = st
				batch = append(batch, w.event(c, event.KindStateChanged, st, ""))
			}
			if err := w.append(batch...); err != nil {
				return err
			}
			sent += len(batch)
		case <-sample.C:
			kb, err := rss(watch.Process.Pid)
			if err != nil {
				return err
			}
			samples = append(samples, kb)
		}
	}
	elapsed := time.Since(start)
	watch.Process.Signal(syscall.SIGTERM)
	io.Copy(io.Discard, stderr)
	watch.Wait()
	mib := func(kb int64) string { return strconv.FormatFloat(float64(kb)/1024, 'f', 1, 64) }
	early := samples[min(4, len(samples)-1)]
	fmt.Println("| transitions/s (achieved) | for | RSS at 5 s (MiB) | RSS at the end (MiB) | peak RSS (MiB) | watch's own summary | command |")
	fmt.Println("|---|---|---|---|---|---|---|")
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("| %d (%.0f) | %s | %s | %s | %s | %s | `lcwrap watch --for running,waiting --exec 'sleep 1'` (default --jobs 4, --queue 1000) |\n",
		*rate, float64(sent)/elapsed.Seconds(), *dur, mib(early), mib(samples[len(samples)-1]), mib(slices.Max(samples)), strings.TrimPrefix(summary, "lcwrap: watch: "))
	return nil
}
