package lastline

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
		if got := Text([]byte(tc.in)); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := Text([]byte(strings.Repeat("é", MaxLine)))
	if len(long) > MaxLine || !utf8.ValidString(long) || len(long) < MaxLine-1 {
		t.Errorf("a long line is cut to %d bytes (valid %v)", len(long), utf8.ValidString(long))
	}
}

// tapOffers collects what a Tap offers.
func tapOffers(chunks ...string) []string {
	var got []string
	tap := &Tap{From: "stdout", Offer: func(text, from string) { got = append(got, text) }}
	for _, c := range chunks {
		tap.Write([]byte(c))
	}
	tap.End()
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
	tap := &Tap{From: "stdout", Offer: func(string, string) {}}
	for i := 0; i < 10000; i++ {
		tap.Write([]byte("\rprogress " + strings.Repeat("#", i%50)))
		if len(tap.partial) > 64 {
			t.Fatalf("the redrawn line holds %d bytes", len(tap.partial))
		}
	}
	tap.Write([]byte(strings.Repeat("x", 3*MaxLine)))
	if len(tap.partial) > MaxLine {
		t.Fatalf("an endless line holds %d bytes", len(tap.partial))
	}
}

// FuzzActivityText: foreign bytes never panic, and what comes out is
// clean text: valid UTF-8, no control characters, trimmed, bounded, and
// a fixed point (cleaning it again changes nothing).
func FuzzActivityText(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/activity/*")
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
		s := Text(line)
		if !utf8.ValidString(s) || len(s) > MaxLine || s != strings.TrimSpace(s) {
			t.Fatalf("Text(%q) = %q", line, s)
		}
		for _, r := range s {
			if unicode.IsControl(r) {
				t.Fatalf("Text(%q) = %q holds control %U", line, s, r)
			}
		}
		if again := Text([]byte(s)); again != s {
			t.Fatalf("not a fixed point: %q -> %q -> %q", line, s, again)
		}
		// A tap offers exactly that text for the line.
		if got := tapOffers(string(line) + "\n"); s != "" && len(line) < MaxLine && !bytes.ContainsRune(line, '\n') && (len(got) != 1 || got[0] != s) {
			t.Fatalf("tap offered %q for %q, want %q", got, line, s)
		}
	})
}
