//go:build linux

package supervise

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/stream"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestOutputActivityNewestWinsAndFlushes(t *testing.T) {
	sink := &memSink{}
	rec := &recorder{child: emit.New(emit.Options{}, sink).Child("c", event.Lineage{}, event.Launched(false))}
	a := newOutputActivity()
	a.offer("first", "stdout")
	a.onReady(rec) // nothing was written yet: at once
	a.offer("second", "stdout")
	a.offer("third", "stderr")
	a.last = a.last.Add(activityInterval) // as if "first" were just now written
	a.onReady(rec)
	if !a.isArmed() {
		t.Fatal("a line within the interval was not held back")
	}
	a.onTimer(rec)
	a.offer("last", "pty")
	a.flush(rec) // within the interval, but the last line is never dropped
	a.flush(rec) // nothing new: nothing written
	var got []string
	for _, e := range sink.events(t) {
		if e.Kind != event.KindActivity || e.State != "" {
			t.Fatalf("event %s/%s", e.Kind, e.State)
		}
		got = append(got, e.Activity+"@"+e.DetailsMap()["output"].(string))
	}
	if want := "first@stdout third@stderr last@pty"; strings.Join(got, " ") != want {
		t.Fatalf("activity %q, want %q", got, want)
	}
}

func init() {
	// burst N: N lines with colour and a secret, then "the end of the
	// burst" (see burstOutput).
	helpers["burst"] = func(args []string) int {
		n, _ := strconv.Atoi(args[0])
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		writeBurst(w, n)
		w.Flush()
		return 0
	}
}

func writeBurst(w io.Writer, n int) {
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "\x1b[32mline %d\x1b[0m of the burst token=sk-abcdefghijklmnopqrstuv%06d\n", i, i)
	}
	io.WriteString(w, "the end of the burst\n")
}

func activities(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == event.KindActivity {
			out = append(out, e.Activity)
		}
	}
	return out
}

func TestOutputActivityOfAChild(t *testing.T) {
	secret := "sk-abcdefghijklmnopqrstuvwxyz012345"
	pieces := []string{"\x1b[1;32mstep 1\x1b[0m: compil", "ing\n", "upload token=" + secret + " done\n", "10%\r55%\r100%\r\n", "last line, no newline"}
	p := startRun(t, Config{Argv: helperArgv(append([]string{"partial"}, pieces...)...), Activity: ActivityOutput})
	for _, want := range []string{"step 1: compiling", "upload token=[REDACTED] done", "100%"} {
		p.send("next")
		testtool.Eventually(t, "activity "+want, func() bool {
			a := activities(p.sink.events(t))
			return len(a) > 0 && a[len(a)-1] == want
		})
	}
	p.send("next")
	if res := p.result(); res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
	evs := p.sink.events(t)
	got := activities(evs)
	if want := "step 1: compiling|upload token=[REDACTED] done|100%|last line, no newline"; strings.Join(got, "|") != want {
		t.Fatalf("activity %q, want %q", got, want)
	}
	// The last line before the exit is the last activity, just before
	// the terminal event; activity changes no state.
	if last := evs[len(evs)-2]; last.Kind != event.KindActivity || last.Activity != "last line, no newline" {
		t.Fatalf("before the terminal event: %s %q", last.Kind, last.Activity)
	}
	if s := states(evs); !strings.HasPrefix(s, "created starting running activity") || !strings.HasSuffix(s, "activity completed") {
		t.Fatalf("events %s", s)
	}
	for _, e := range evs {
		line, _ := e.Marshal()
		if strings.Contains(string(line), secret) {
			t.Fatalf("secret in %s", line)
		}
		if e.Kind == event.KindActivity && e.DetailsMap()["output"] != "stdout" {
			t.Fatalf("activity details %v", e.DetailsMap())
		}
	}
	// The child's bytes came through unchanged (the line reader drops
	// the "\r" before each "\n").
	var lines []string
	for l := range p.lines {
		lines = append(lines, l)
	}
	if got, want := strings.Join(lines, "\n"), "\x1b[1;32mstep 1\x1b[0m: compiling\nupload token="+secret+" done\n10%\r55%\r100%\nlast line, no newline"; got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
}

func TestOutputActivityOfABurstIsRateLimited(t *testing.T) {
	// lcwrap's stdout a pipe in blocking mode, as a shell makes it: the
	// bytes go by tee(2); a non-blocking one: they are copied.
	for _, blocking := range []bool{true, false} {
		t.Run(fmt.Sprintf("blocking=%v", blocking), func(t *testing.T) { testBurst(t, blocking) })
	}
}

func testBurst(t *testing.T, blocking bool) {
	const n = 100000
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if blocking {
		w.Fd() // puts it in blocking mode
	}
	if got := stream.Teeable(w); got != blocking {
		t.Fatalf("tee(2) used: %v", got)
	}
	sums := make(chan []byte, 1)
	go func() {
		h := sha256.New()
		io.Copy(h, r)
		sums <- h.Sum(nil)
	}()
	sink := &memSink{}
	start := time.Now()
	res, err := Run(context.Background(), Config{Argv: helperArgv("burst", strconv.Itoa(n)), Stdout: w, Stderr: os.Stderr, Activity: ActivityOutput,
		Emitter: emit.New(emit.Options{}, sink), ChildID: "burst", Signals: &Signals{c: make(chan os.Signal, 1)}})
	elapsed := time.Since(start)
	w.Close()
	if err != nil || res.State != event.StateCompleted {
		t.Fatalf("%v, %s", err, res.State)
	}
	want := sha256.New()
	writeBurst(want, n)
	if got := <-sums; !bytes.Equal(got, want.Sum(nil)) {
		t.Fatal("the child's bytes did not arrive intact")
	}
	evs := sink.events(t)
	got := activities(evs)
	// One at once, at most one per further whole second, and the flush.
	if limit := int(elapsed/activityInterval) + 2; len(got) == 0 || len(got) > limit {
		t.Fatalf("%d activity events in %v (at most %d)", len(got), elapsed, limit)
	}
	if last := evs[len(evs)-2]; last.Kind != event.KindActivity || last.Activity != "the end of the burst" {
		t.Fatalf("before the terminal event: %s %q", last.Kind, last.Activity)
	}
	for _, a := range got[:len(got)-1] {
		if !strings.HasPrefix(a, "line ") || !strings.Contains(a, "token=[REDACTED]") {
			t.Fatalf("activity %q", a)
		}
	}
}
