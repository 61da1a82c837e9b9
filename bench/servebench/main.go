// Command servebench measures lcwrap serve (issue 26), side by side in one
// run:
//
//	servebench stream -serve BIN -lcwrap BIN [-clients 100 -rate 1000 -secs 30]
//
// starts lcwrap-serve on a fresh journal, opens -clients SSE streams on
// it and starts as many `lcwrap tail --follow` processes, then appends
// -rate events a second for -secs seconds, each carrying its write time.
// Every receiver must get every line once, in order; it prints, tab
// separated: lines each receiver got, SSE errors, tail errors, p50 and p99
// delivery (ms) of the SSE clients and of the tails, the server's CPU and
// the tails' CPU (seconds, user+system over the writing).
//
//	servebench children -serve BIN -lcwrap BIN -journal J [-runs 15]
//
// times GET /v1/children?all=1 (a new connection each) against
// `lcwrap status --all --json` on the same journal, alternating, and
// prints the two medians (ms) and the number of children.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: servebench stream|children ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "stream":
		err = stream(os.Args[2:])
	case "children":
		err = children(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "servebench:", err)
		os.Exit(1)
	}
}

// server is a running lcwrap-serve.
type server struct {
	cmd   *exec.Cmd
	url   string
	token string
}

var serving = regexp.MustCompile(`on (http://[^ ]+/) `)

// stall is lcwrap-serve's --stream-stall in the benchmark: long, so that a
// client starved by a loaded machine is measured late rather than cut off
// (the cut-off has a test of its own; a tail is never cut off).
var stall = "120s"

func startServer(bin, journalPath, dir string) (*server, error) {
	tf := filepath.Join(dir, "serve.token")
	cmd := exec.Command(bin, "--journal", journalPath, "--listen", "127.0.0.1:0", "--token-file", tf, "--max-streams", "1000", "--stream-stall", stall)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			} else if !strings.Contains(sc.Text(), "made the token file") {
				fmt.Fprintln(os.Stderr, sc.Text())
			}
		}
	}()
	select {
	case u := <-found:
		tok, err := os.ReadFile(tf)
		if err != nil {
			return nil, err
		}
		return &server{cmd: cmd, url: u, token: strings.TrimSpace(string(tok))}, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, errors.New("lcwrap-serve did not start")
	}
}

func (s *server) stop() { s.cmd.Process.Kill(); s.cmd.Wait() }

// cpu returns a process's user+system time from /proc (clock ticks of 10 ms).
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// line builds one activity event of child "bench" carrying its write time.
func line(seq int64, at time.Time) []byte {
	e := event.Event{SchemaVersion: 1, EventID: "b/" + strconv.FormatInt(seq, 10), Source: "lcwrap", SourceEpoch: "b", ChildID: "bench",
		Lineage: event.Lineage{RootChildID: "bench"}, Kind: event.KindActivity, ObservedAt: event.Timestamp(at), Sequence: event.Int64(seq),
		Activity: "t=" + strconv.FormatInt(at.UnixNano(), 10), Capabilities: event.Launched(true).Set}
	if seq == 1 {
		e.Kind, e.State, e.Activity = event.KindCreated, event.StateCreated, "t="+strconv.FormatInt(at.UnixNano(), 10)
	}
	b, err := e.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

var stampRE = []byte(`"activity":"t=`)

// receiver tallies what one client received.
type receiver struct {
	next    int64 // the journalSequence expected next
	errs    int64
	got     int64
	lat     []time.Duration
	measure *atomic.Bool
}

// take handles one received journal line (raw JSON).
func (r *receiver) take(now time.Time, b []byte) {
	var seq int64
	if i := bytes.Index(b, []byte(`"journalSequence":`)); i >= 0 {
		j := i + len(`"journalSequence":`)
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			seq = seq*10 + int64(b[j]-'0')
			j++
		}
	}
	if seq != r.next {
		r.errs++
	}
	r.next = seq + 1
	r.got++
	if i := bytes.Index(b, stampRE); i >= 0 && r.measure.Load() {
		j := i + len(stampRE)
		var ns int64
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			ns = ns*10 + int64(b[j]-'0')
			j++
		}
		r.lat = append(r.lat, now.Sub(time.Unix(0, ns)))
	}
}

func stream(args []string) error {
	fs := flag.NewFlagSet("stream", flag.ExitOnError)
	serveBin := fs.String("serve", "bin/lcwrap-serve", "lcwrap-serve")
	lcwrapBin := fs.String("lcwrap", "bin/lcwrap", "lcwrap")
	clients := fs.Int("clients", 100, "SSE clients, and as many tail processes")
	rate := fs.Int("rate", 1000, "events a second")
	secs := fs.Int("secs", 30, "seconds of writing")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	jp := filepath.Join(dir, "journal.jsonl")
	j, err := journal.Open(jp, journal.Options{})
	if err != nil {
		return err
	}
	defer j.Close()
	// Line 1 exists before anyone follows: every receiver starts after it.
	if _, err := j.Append([][]byte{line(1, time.Now())}, false); err != nil {
		return err
	}
	srv, err := startServer(*serveBin, jp, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	measure := &atomic.Bool{}
	total := int64(1 + 1 + *rate**secs) // line 1, the warm-up line, the run
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sse := make([]*receiver, *clients)
	tails := make([]*receiver, *clients)
	var tailCmds []*exec.Cmd
	var mu sync.Mutex
	for i := range *clients {
		r := &receiver{next: 2, measure: measure}
		sse[i] = r
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.url+"v1/events?after=1", nil)
		req.Header.Set("Authorization", "Bearer "+srv.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("stream %d: %s", i, resp.Status)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			br := bufio.NewReaderSize(resp.Body, 64<<10)
			for {
				l, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.HasPrefix(l, []byte("data: ")) {
					now := time.Now()
					mu.Lock()
					r.take(now, l[6:])
					mu.Unlock()
				}
			}
		}()
	}
	for i := range *clients {
		r := &receiver{next: 2, measure: measure}
		tails[i] = r
		cmd := exec.CommandContext(ctx, *lcwrapBin, "tail", "--follow", "--after", "1", "--journal", jp)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		tailCmds = append(tailCmds, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReaderSize(out, 64<<10)
			for {
				l, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				now := time.Now()
				mu.Lock()
				r.take(now, l)
				mu.Unlock()
			}
		}()
	}
	all := append(append([]*receiver{}, sse...), tails...)
	got := func(n int64) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range all {
			if r.got < n {
				return false
			}
		}
		return true
	}
	// Warm-up: one line every receiver must see before the run starts.
	if _, err := j.Append([][]byte{line(2, time.Now())}, false); err != nil {
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); !got(1); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("the receivers did not all start within 60 s")
		}
	}
	measure.Store(true)
	cpu0 := cpu(srv.cmd.Process.Pid)
	var tcpu0 time.Duration
	for _, c := range tailCmds {
		tcpu0 += cpu(c.Process.Pid)
	}
	// Write: every 10 ms, the events due by then.
	seq := int64(3)
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	for seq <= total {
		<-tick.C
		due := min(total, 2+int64(time.Since(start).Seconds()*float64(*rate)))
		var batch [][]byte
		now := time.Now()
		for ; seq <= due; seq++ {
			batch = append(batch, line(seq, now))
		}
		if len(batch) > 0 {
			if _, err := j.Append(batch, false); err != nil {
				return err
			}
		}
	}
	tick.Stop()
	wrote := time.Since(start)
	for deadline := time.Now().Add(60 * time.Second); !got(total - 1); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	cpu1 := cpu(srv.cmd.Process.Pid)
	var tcpu1 time.Duration
	for _, c := range tailCmds {
		tcpu1 += cpu(c.Process.Pid)
	}
	cancel()
	srv.stop()
	for _, c := range tailCmds {
		c.Wait()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	pct := func(rs []*receiver) (float64, float64, int64, int64) {
		var l []time.Duration
		var errs, least int64 = 0, -1
		for _, r := range rs {
			l = append(l, r.lat...)
			errs += r.errs
			if least < 0 || r.got < least {
				least = r.got
			}
		}
		slices.Sort(l)
		if len(l) == 0 {
			return 0, 0, errs, least
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		return ms(l[len(l)/2]), ms(l[len(l)*99/100]), errs, least
	}
	s50, s99, serrs, sleast := pct(sse)
	t50, t99, terrs, tleast := pct(tails)
	fmt.Printf("%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.1f\n", total-1, sleast, tleast, serrs, terrs,
		s50, s99, t50, t99, (cpu1 - cpu0).Seconds(), (tcpu1 - tcpu0).Seconds(), wrote.Seconds())
	return nil
}

func children(args []string) error {
	fs := flag.NewFlagSet("children", flag.ExitOnError)
	serveBin := fs.String("serve", "bin/lcwrap-serve", "lcwrap-serve")
	lcwrapBin := fs.String("lcwrap", "bin/lcwrap", "lcwrap")
	jp := fs.String("journal", "", "a journal")
	runs := fs.Int("runs", 15, "runs of each")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(*serveBin, *jp, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	get := func() (int, time.Duration, error) {
		t := time.Now()
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		req, _ := http.NewRequest("GET", srv.url+"v1/children?all=1", nil)
		req.Header.Set("Authorization", "Bearer "+srv.token)
		resp, err := c.Do(req)
		if err != nil {
			return 0, 0, err
		}
		var rep struct{ Children []json.RawMessage }
		err = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		return len(rep.Children), time.Since(t), err
	}
	// The first answer waits for the server to have read the journal.
	n, _, err := get()
	if err != nil {
		return err
	}
	var g, s []time.Duration
	for range *runs {
		_, d, err := get()
		if err != nil {
			return err
		}
		g = append(g, d)
		t := time.Now()
		cmd := exec.Command(*lcwrapBin, "status", "--all", "--json", "--journal", *jp)
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			return err
		}
		s = append(s, time.Since(t))
	}
	slices.Sort(g)
	slices.Sort(s)
	fmt.Printf("%.1f\t%.1f\t%d\n", float64(g[len(g)/2].Microseconds())/1000, float64(s[len(s)/2].Microseconds())/1000, n)
	return nil
}
