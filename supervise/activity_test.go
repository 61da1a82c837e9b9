//go:build linux

package supervise

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/capabilities"
	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/internal/stream"
	"github.com/lcwrap/lcwrap/jsonl"
)

func TestActivityText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain line", "plain line"},
		{"  padded\t line \t", "padded  line"},
		{"\x1b[1;31merror:\x1b[0m build failed", "error: build failed"},
		{"\x1b[38;5;208morange\x1b[m", "orange"},
		{"\x1b[?25l\x1b[2K\x1b[1Ghidden cursor", "hidden cursor"},
		{"\x1b]0;window title\x07after title", "after title"},
		{"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1bP1$r0m\x1b\\dcs gone", "dcs gone"},
		{"\x1b(Bcharset\x1b)0 selections\x1b%G", "charset selections"},
		{"\x1b7saved\x1b8 and \x1bMreverse", "saved and reverse"},
		{"progress 10%\rprogress 55%\rprogress 100%", "progress 100%"},
		{"windows line\r", "windows line"},
		{"done\r\r", "done"},
		{"\x1b[2K\rDownloading 3/7", "Downloading 3/7"},
		{"bell\x07 back\bspace nul\x00 del\x7f", "bell backspace nul del"},
		{"c1 \u0085\u009bcontrols", "c1 controls"},
		{"bad \xff\xfe utf-8", "bad \ufffd\ufffd utf-8"},
		{"unfinished \x1b[31", "unfinished"},
		{"unfinished osc \x1b]0;title", "unfinished osc"},
		{"lone escape at the end \x1b", "lone escape at the end"},
		{"", ""},
		{"\x1b[0m", ""},
		{"   \t ", ""},
		{"progress\r", "progress"},
		{"ünïcødé ✓ 日本語", "ünïcødé ✓ 日本語"},
		// A TUI's cursor moves stand for spaces; countdown digits are no
		// activity.
		{"\x1b[2C●\x1b[1Chigh\x1b[1C·\x1b[1C/effort", "● high · /effort"},
		{"a\x1b[5;10Hb\x1b[3Gc \x1b[1Cd", "a b c d"},
		{"back\x1b[2Dspace", "backspace"},
		{"33", ""},
		{"\x1b[1C1", ""},
		{"retry in 33s", "retry in 33s"},
	} {
		if got := activityText([]byte(tc.in)); got != tc.want {
			t.Errorf("activityText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := activityText([]byte(strings.Repeat("é", maxLine)))
	if len(long) > maxLine || !utf8.ValidString(long) || len(long) < maxLine-1 {
		t.Errorf("a long line is cut to %d bytes (valid %v)", len(long), utf8.ValidString(long))
	}
}

// offers collects what a lineTap offers.
func tapOffers(chunks ...string) []string {
	a := newOutputActivity()
	tap := &lineTap{to: a, from: "stdout"}
	var got []string
	take := func() {
		a.mu.Lock()
		if a.fresh {
			got = append(got, a.text)
			a.fresh = false
		}
		a.mu.Unlock()
	}
	for _, c := range chunks {
		tap.Write([]byte(c))
		take()
	}
	tap.End()
	take()
	return got
}

func TestLineTap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"the latest complete line of a chunk", []string{"one\ntwo\nthr"}, []string{"two", "thr"}},
		{"a line across chunks", []string{"compil", "ing foo", ".c\nlink"}, []string{"compiling foo.c", "link"}},
		{"empty and escape-only lines are skipped", []string{"real\n\n \x1b[0m\n\n"}, []string{"real"}},
		{"nothing but empty lines offers nothing", []string{"\n\n", "\r\n"}, nil},
		{"progress redrawn across chunks", []string{"10%\r20%", "\r30", "%\r", "\n"}, []string{"30%"}},
		{"a CRLF split between chunks", []string{"crlf\r", "\nnext\r\n"}, []string{"next"}},
		{"a redraw after a trailing CR", []string{"old\r", "new\n"}, []string{"new"}},
		{"an escape split between chunks", []string{"\x1b[3", "2mgreen\x1b[0m\n"}, []string{"green"}},
		{"the unfinished last line counts at the end", []string{"a\nno newline"}, []string{"a", "no newline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tapOffers(tc.chunks...)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("offered %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLineTapAnySplit: however the output is cut into chunks, the last
// line offered is the same.
func TestLineTapAnySplit(t *testing.T) {
	out := "build\n\x1b[32mok\x1b[0m 1/3\r\n10%\r50%\r100%\r\n\n\x1b]0;t\x07step\tthree\r\n\n"
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		var chunks []string
		for rest := out; rest != ""; {
			n := 1 + r.IntN(len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		got := tapOffers(chunks...)
		if len(got) == 0 || got[len(got)-1] != "step three" {
			t.Fatalf("chunks %q: offered %q", chunks, got)
		}
	}
}

func TestLineTapKeepsLongRedrawsBounded(t *testing.T) {
	a := newOutputActivity()
	tap := &lineTap{to: a, from: "stdout"}
	for i := 0; i < 10000; i++ {
		tap.Write([]byte("\rprogress " + strings.Repeat("#", i%50)))
		if len(tap.partial) > 64 {
			t.Fatalf("the redrawn line holds %d bytes", len(tap.partial))
		}
	}
	tap.Write([]byte(strings.Repeat("x", 3*maxLine)))
	if len(tap.partial) > maxLine {
		t.Fatalf("an endless line holds %d bytes", len(tap.partial))
	}
}

func TestOutputActivityNewestWinsAndFlushes(t *testing.T) {
	sink := &memSink{}
	rec := &recorder{child: emit.New(emit.Options{}, sink).Child("c", jsonl.Lineage{}, capabilities.Launched(false))}
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
		if e.Kind != jsonl.KindActivity || e.State != "" {
			t.Fatalf("event %s/%s", e.Kind, e.State)
		}
		got = append(got, e.Activity+"@"+e.DetailsMap()["output"].(string))
	}
	if want := "first@stdout third@stderr last@pty"; strings.Join(got, " ") != want {
		t.Fatalf("activity %q, want %q", got, want)
	}
}

// FuzzActivityText: foreign bytes never panic, and what comes out is
// clean text: valid UTF-8, no control characters, trimmed, bounded, and
// a fixed point (cleaning it again changes nothing).
func FuzzActivityText(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/activity/*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte("\x1b[31mred\x1b[0m\r\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		s := activityText(line)
		if !utf8.ValidString(s) || len(s) > maxLine || s != strings.TrimSpace(s) {
			t.Fatalf("activityText(%q) = %q", line, s)
		}
		for _, r := range s {
			if unicode.IsControl(r) {
				t.Fatalf("activityText(%q) = %q holds control %U", line, s, r)
			}
		}
		if again := activityText([]byte(s)); again != s {
			t.Fatalf("not a fixed point: %q -> %q -> %q", line, s, again)
		}
		// A tap offers exactly that text for the line.
		if got := tapOffers(string(line) + "\n"); s != "" && len(line) < maxLine && !bytes.ContainsRune(line, '\n') && (len(got) != 1 || got[0] != s) {
			t.Fatalf("tap offered %q for %q, want %q", got, line, s)
		}
	})
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

func activities(evs []jsonl.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == jsonl.KindActivity {
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
		waitUntil(t, "activity "+want, func() bool {
			a := activities(p.sink.events(t))
			return len(a) > 0 && a[len(a)-1] == want
		})
	}
	p.send("next")
	if res := p.result(); res.State != jsonl.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
	evs := p.sink.events(t)
	got := activities(evs)
	if want := "step 1: compiling|upload token=[REDACTED] done|100%|last line, no newline"; strings.Join(got, "|") != want {
		t.Fatalf("activity %q, want %q", got, want)
	}
	// The last line before the exit is the last activity, just before
	// the terminal event; activity changes no state.
	if last := evs[len(evs)-2]; last.Kind != jsonl.KindActivity || last.Activity != "last line, no newline" {
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
		if e.Kind == jsonl.KindActivity && e.DetailsMap()["output"] != "stdout" {
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
	if err != nil || res.State != jsonl.StateCompleted {
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
	if last := evs[len(evs)-2]; last.Kind != jsonl.KindActivity || last.Activity != "the end of the burst" {
		t.Fatalf("before the terminal event: %s %q", last.Kind, last.Activity)
	}
	for _, a := range got[:len(got)-1] {
		if !strings.HasPrefix(a, "line ") || !strings.Contains(a, "token=[REDACTED]") {
			t.Fatalf("activity %q", a)
		}
	}
}
