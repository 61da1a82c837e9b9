package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCleanEscapesBidi: bidi controls are shown escaped on a terminal,
// never passed to it (issue 23 item 10).
func TestCleanEscapesBidi(t *testing.T) {
	for _, s := range []string{"exe.\u202etxt", "a\u2066b\u2069", "x\u200ey\u200fz\u061c", "\u202a\u202b\u202c\u202d\u2067\u2068"} {
		for name, f := range map[string]func(string) string{"Clean": Clean, "Printable": Line, "Shorten": func(s string) string { return Shorten(s, 80) }} {
			got := f(s)
			if strings.ContainsAny(got, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c") || !strings.Contains(got, `\u`) {
				t.Errorf("%s(%q) = %q", name, s, got)
			}
		}
	}
	if got := Clean("exe.\u202etxt"); got != `exe.\u202etxt` {
		t.Errorf("Clean = %q", got)
	}
}

func TestCutMiddle(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"nightly-integration-0042", 12, "night…n-0042"},
		{"abcdef", 3, "ab…"},
	} {
		if got := CutMiddle(tc.in, tc.n); got != tc.want || utf8.RuneCountInString(got) > tc.n {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestCutAndBlank(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"short", 5, "short"},
		{"shorter", 5, "shor…"},
		{"ééééé", 3, "éé…"},
		{"x", 0, ""},
	} {
		if got := Cut(tc.in, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := Clean("  a \t b\x1b[31m  "); got != `a b\u001b[31m` {
		t.Errorf("Clean = %q", got)
	}
	if got := Blank("a\x1b[31m\tb\u0085c", ' '); got != "a [31m b c" {
		t.Errorf("Blank = %q", got)
	}
}
