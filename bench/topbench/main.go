// Command topbench measures lcwrap top on a journal, in a real pty of
// 80×24: the time to its first full frame, the CPU each refresh with new
// events costs, and the CPU it uses idle. It prints one tab-separated line:
// first-paint wall ms, CPU ms at first paint, median refresh CPU ms, max
// refresh CPU ms, idle CPU ms per minute, median wall ms from an append
// to the frame that shows it. With -fleet it runs top --fleet on a
// gateway's output directory instead. It is a benchmark tool, not part
// of lcwrap.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/lcwrap/lcwrap/bench/internal/procstat"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

func main() {
	top := flag.String("top", "bin/lcwrap-top", "the lcwrap-top binary")
	path := flag.String("journal", "", "the journal (it is appended to)")
	fleetDir := flag.String("fleet", "", "a gateway's output directory instead of a journal: top --fleet; each refresh's events are appended to its gateway.jsonl as one OTLP-JSON request of host bench-host")
	rounds := flag.Int("rounds", 20, "refreshes of -events new events each")
	events := flag.Int("events", 100, "events per refresh")
	idle := flag.Duration("idle", 60*time.Second, "idle time measured (scaled to a minute)")
	flag.Parse()
	if err := run(*top, *path, *fleetDir, *rounds, *events, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "topbench:", err)
		os.Exit(1)
	}
}

// screen collects what top writes.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// waitFor waits until the output since mark contains want.
func (s *screen) waitFor(mark int, want string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		s.mu.Lock()
		ok := bytes.Contains(s.buf.Bytes()[min(mark, s.buf.Len()):], []byte(want))
		s.mu.Unlock()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			s.mu.Lock()
			tail := s.buf.Bytes()[min(mark, s.buf.Len()):]
			s.mu.Unlock()
			return fmt.Errorf("top never showed %q; it wrote %q", want, tail[max(0, len(tail)-3000):])
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *screen) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Len()
}

func run(top, path, fleetDir string, rounds, events int, idle time.Duration) error {
	cmd := exec.Command(top, "-journal", path)
	if fleetDir != "" {
		cmd = exec.Command(top, "-fleet", fleetDir)
	}
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm-256color")
	start := time.Now()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		return err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var scr screen
	go func() {
		b := make([]byte, 64<<10)
		for {
			n, err := ptmx.Read(b)
			// Answer as a terminal does: bubbletea asks for the
			// background colour (OSC 11) and the cursor position (DSR)
			// before it starts, and waits up to 5 s for an answer.
			if bytes.Contains(b[:n], []byte("\x1b[6n")) {
				ptmx.Write([]byte("\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[1;1R"))
			}
			scr.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	first := "children:"
	if fleetDir != "" {
		first = "LAST HEARD" // the host table (the title is cut at 80 columns)
	}
	if err := scr.waitFor(0, first, 10*time.Minute); err != nil {
		return err
	}
	if err := scr.waitFor(0, "q quit", time.Minute); err != nil {
		return err
	}
	paint := time.Since(start)
	paintCPU := cpu(cmd.Process.Pid)
	// A second after its first frame top returns the garbage of the
	// reading to the system, once: not a refresh's cost.
	time.Sleep(3 * time.Second)

	appendLines := func(lines [][]byte) error { return gatewayAppend(filepath.Join(fleetDir, "gateway.jsonl"), lines) }
	if fleetDir == "" {
		j, err := journal.Open(path, journal.Options{})
		if err != nil {
			return err
		}
		defer j.Close()
		appendLines = func(lines [][]byte) error { _, err := j.Append(lines, false); return err }
	}
	var costs, lags []time.Duration
	epoch := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	for r := range rounds {
		lines := batch(epoch, r, events)
		// The selection stays on its child, so new rows may scroll past
		// the top: any row of this round shows the refresh.
		last := fmt.Sprintf("new-%03d-", r)
		time.Sleep(300 * time.Millisecond) // let the last frame settle
		mark, before := scr.len(), cpu(cmd.Process.Pid)
		appended := time.Now()
		if err := appendLines(lines); err != nil {
			return err
		}
		if err := scr.waitFor(mark, last, time.Minute); err != nil {
			return err
		}
		lags = append(lags, time.Since(appended))
		// The frame is out; let the refresh finish its work, then count.
		time.Sleep(200 * time.Millisecond)
		costs = append(costs, cpu(cmd.Process.Pid)-before)
	}
	// Idle: no new events. The 1 s clock still redraws durations.
	time.Sleep(time.Second)
	before := cpu(cmd.Process.Pid)
	time.Sleep(idle)
	idleCPU := time.Duration(float64(cpu(cmd.Process.Pid)-before) * float64(time.Minute) / float64(idle))
	ptmx.Write([]byte("q"))
	slices.Sort(costs)
	slices.Sort(lags)
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }
	fmt.Printf("%s\t%s\t%s\t%s\t%s\t%s\n", ms(paint), ms(paintCPU), ms(costs[len(costs)/2]), ms(costs[len(costs)-1]), ms(idleCPU), ms(lags[len(lags)/2]))
	return nil
}

// batch is events new events: children that start, run and say what they
// do.
func batch(epoch string, round, events int) [][]byte {
	var lines [][]byte
	caps := event.Launched(true).Set
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	for i := 0; len(lines) < events; i++ {
		id := fmt.Sprintf("new-%03d-%02d", round, i)
		steps := []struct {
			kind  event.Kind
			state event.State
			act   string
		}{{event.KindCreated, event.StateCreated, ""}, {event.KindStateChanged, event.StateStarting, ""}, {event.KindStateChanged, event.StateRunning, ""}, {event.KindActivity, "", "compiling"}}
		for s, st := range steps {
			if len(lines) == events {
				break
			}
			e := event.Event{SchemaVersion: 1, EventID: fmt.Sprintf("%s/%s/%d", epoch, id, s+1), Source: "lcwrap", SourceEpoch: epoch, ChildID: id,
				Lineage: event.Lineage{RootChildID: id}, Kind: st.kind, State: st.state, ObservedAt: now, Sequence: event.Int64(int64(s + 1)), Activity: st.act, Capabilities: caps}
			if st.kind == event.KindCreated {
				e.Details = []byte(`{"command":["make","test"],"heartbeatIntervalMs":10000}`)
			}
			b, _ := e.Marshal()
			lines = append(lines, b)
		}
	}
	return lines
}

// gatewayAppend appends lines to a gateway's output file as one OTLP-JSON
// export request of host bench-host, each line a record's body, stamped
// as the gateway's lcwrap_receive_time processor does.
func gatewayAppend(path string, lines [][]byte) error {
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	recs := make([]any, len(lines))
	for i, l := range lines {
		body := append(l[:len(l):len(l)], []byte{}...)
		body = append(body[:len(body)-1], fmt.Sprintf(`,"journalSequence":%d}`, benchSeq+int64(i)+1)...)
		recs[i] = map[string]any{"observedTimeUnixNano": now, "body": map[string]any{"stringValue": string(body)},
			"attributes": []any{map[string]any{"key": "lcwrap.gateway.received_time_unix_nano", "value": map[string]any{"intValue": now}}}}
	}
	benchSeq += int64(len(lines))
	req := map[string]any{"resourceLogs": []any{map[string]any{
		"resource":  map[string]any{"attributes": []any{map[string]any{"key": "host.name", "value": map[string]any{"stringValue": "bench-host"}}}},
		"scopeLogs": []any{map[string]any{"scope": map[string]any{}, "logRecords": recs}}}}}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// benchSeq is the last journalSequence given to bench-host's lines.
var benchSeq int64

// cpu is the CPU time of every thread of pid so far (0 once it is gone).
func cpu(pid int) time.Duration {
	d, _ := procstat.CPU(pid)
	return d
}
