// Command adoptbench measures `lcwrap adopt` for `make bench` (it is not
// part of lcwrap).
//
// latency: exit-detection latency, from the moment a watched process exits
// (its parent's wait returns; adoptbench is that parent) to the moment the
// watcher reports it: lcwrap's terminal line read from its stdout, or the
// peer (`tail --pid=N -f /dev/null`, `pidwait -F FILE`) exiting. Each
// watched process is a `cat` that exits by itself when adoptbench closes
// its stdin, at a random moment within a second, so a polling peer is not
// favoured by the phase of its period. Prints one markdown row per tool.
//
// idle: one lcwrap adopting many sleeping processes; its CPU time while
// nothing happens, its peak RSS, and how long it takes to record every
// exit once they all end. Prints one markdown row.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/bench/internal/procstat"
)

var (
	lcwrap = flag.String("lcwrap", "bin/lcwrap", "lcwrap binary")
	mode   = flag.String("mode", "latency", "latency or idle")
	n      = flag.Int("n", 200, "latency: exits measured per tool")
	batch  = flag.Int("batch", 20, "latency: watchers running at once")
	procs  = flag.Int("procs", 1000, "idle: processes adopted")
	idle   = flag.Duration("idle", 30*time.Second, "idle: measuring window")
	watch  = flag.String("watch", "auto", "idle: lcwrap --watch")
	tmp    = flag.String("tmp", os.TempDir(), "scratch directory")
)

func main() {
	flag.Parse()
	var err error
	switch *mode {
	case "latency":
		err = latency()
	case "idle":
		err = idleRow()
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "adoptbench:", err)
		os.Exit(1)
	}
}

// sleeper is a process adoptbench is the parent of; it exits 0 when its
// stdin closes.
type sleeper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startSleeper() (*sleeper, error) {
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &sleeper{cmd: cmd, stdin: stdin}, nil
}

// end makes the sleeper exit and returns when its wait returns.
func (s *sleeper) end() (time.Time, error) {
	s.stdin.Close()
	err := s.cmd.Wait()
	return time.Now(), err
}

// watcher is one running watcher: ready closes once it watches, exited
// receives the moment it reported the exit.
type watcher struct {
	cmd    *exec.Cmd
	ready  chan struct{}
	exited chan time.Time
}

type tool struct {
	name  string
	row   string // the command, for the table
	start func(pid int) (*watcher, error)
}

var tools = []tool{
	{"lcwrap adopt", "`lcwrap adopt --no-journal --emit stdout PID`", startLcwrap},
	{"pidwait (procps)", "`pidwait -F PIDFILE`", func(pid int) (*watcher, error) {
		f := filepath.Join(*tmp, "adoptbench-"+strconv.Itoa(pid)+".pid") // left for pidwait; the bench's scratch directory
		if err := os.WriteFile(f, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
			return nil, err
		}
		return startPeer(exec.Command("pidwait", "-F", f))
	}},
	{"tail --pid", "`tail --pid=PID -f /dev/null`", func(pid int) (*watcher, error) {
		return startPeer(exec.Command("tail", "--pid="+strconv.Itoa(pid), "-f", "/dev/null"))
	}},
}

// startLcwrap is ready once lcwrap has written the limits diagnostic, and
// reports when the terminal line arrives.
func startLcwrap(pid int) (*watcher, error) {
	cmd := exec.Command(*lcwrap, "adopt", "--no-journal", "--emit", "stdout", strconv.Itoa(pid))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &watcher{cmd: cmd, ready: make(chan struct{}), exited: make(chan time.Time, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.Contains(line, `"kind":"diagnostic"`):
				close(w.ready)
			case strings.Contains(line, `"kind":"terminal"`):
				w.exited <- time.Now()
			}
		}
		cmd.Wait()
	}()
	return w, nil
}

// startPeer has no readiness signal: it counts as ready at once, and the
// settle delay gives it time to start watching.
func startPeer(cmd *exec.Cmd) (*watcher, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &watcher{cmd: cmd, ready: make(chan struct{}), exited: make(chan time.Time, 1)}
	close(w.ready)
	go func() {
		cmd.Wait()
		w.exited <- time.Now()
	}()
	return w, nil
}

const (
	settle = 100 * time.Millisecond // peers have no readiness signal
	spread = time.Second            // ends are spread over this much time
)

func latency() error {
	fmt.Println("| watcher | exits | median (ms) | p99 (ms) | max (ms) | command |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, t := range tools {
		lat, err := measure(t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		slices.Sort(lat)
		fmt.Printf("| %s | %d | %.2f | %.2f | %.2f | %s |\n", t.name, len(lat), pct(lat, 50), pct(lat, 99), lat[len(lat)-1], t.row)
	}
	return nil
}

func measure(t tool) ([]float64, error) {
	var lat []float64
	for len(lat) < *n {
		k := min(*batch, *n-len(lat))
		sl := make([]*sleeper, k)
		ws := make([]*watcher, k)
		for i := range k {
			s, err := startSleeper()
			if err != nil {
				return nil, err
			}
			w, err := t.start(s.cmd.Process.Pid)
			if err != nil {
				return nil, err
			}
			sl[i], ws[i] = s, w
		}
		for _, w := range ws {
			select {
			case <-w.ready:
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("watcher not ready after 10s")
			}
		}
		// Each sleeper ends at its own random moment within a second, so a
		// polling peer is caught at a random point of its period and no end
		// waits for another's detection.
		type result struct {
			ms  float64
			err error
		}
		results := make(chan result, k)
		begin := time.Now().Add(settle)
		for i := range k {
			at := begin.Add(rand.N(spread))
			go func() {
				time.Sleep(time.Until(at))
				t0, err := sl[i].end()
				if err != nil {
					results <- result{err: fmt.Errorf("sleeper: %v", err)}
					return
				}
				select {
				case t1 := <-ws[i].exited:
					results <- result{ms: float64(t1.Sub(t0).Microseconds()) / 1000}
				case <-time.After(10 * time.Second):
					results <- result{err: fmt.Errorf("no exit reported within 10s")}
				}
			}()
		}
		for range k {
			r := <-results
			if r.err != nil {
				return nil, r.err
			}
			lat = append(lat, r.ms)
		}
	}
	return lat, nil
}

func pct(sorted []float64, p int) float64 {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func idleRow() error {
	sl := make([]*sleeper, *procs)
	args := []string{"adopt", "--no-journal", "--emit", "stdout", "--watch=" + *watch}
	for i := range sl {
		s, err := startSleeper()
		if err != nil {
			return err
		}
		sl[i] = s
		args = append(args, strconv.Itoa(s.cmd.Process.Pid))
	}
	start := time.Now()
	cmd := exec.Command(*lcwrap, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	adopted, ended := make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		var diags, terms int
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.Contains(line, `"kind":"diagnostic"`):
				if diags++; diags == *procs {
					close(adopted)
				}
			case strings.Contains(line, `"kind":"terminal"`):
				if terms++; terms == *procs {
					close(ended)
				}
			}
		}
	}()
	select {
	case <-adopted:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("lcwrap did not adopt %d processes within 60s", *procs)
	}
	adoptTime := time.Since(start)
	pid := cmd.Process.Pid
	c0, err := procstat.CPU(pid)
	if err != nil {
		return err
	}
	time.Sleep(*idle)
	c1, err := procstat.CPU(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for _, s := range sl {
		s.stdin.Close()
	}
	for _, s := range sl {
		s.cmd.Wait()
	}
	select {
	case <-ended:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("lcwrap did not record %d exits within 60s", *procs)
	}
	drain := time.Since(t0)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("lcwrap adopt: %v", err)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	fmt.Printf("| %d | %s | %d | %.1f | %.1f | %d | `lcwrap adopt --no-journal --emit stdout --watch=%s PID...` |\n",
		*procs, *watch, adoptTime.Milliseconds(), float64(c1-c0)/1e6, float64(rss)/1024, drain.Milliseconds(), *watch)
	return nil
}
