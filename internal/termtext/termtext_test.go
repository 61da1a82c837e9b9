package termtext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"", ""},
		{"retitle \x1b]0;PWNED\x07 clear \x1b[2J", `retitle \u001b]0;PWNED\u0007 clear \u001b[2J`},
		{"tab\tnew\nline\r\v\f", "tab new line   "},
		{"nul\x00 bs\b del\x7f", `nul\u0000 bs\u0008 del\u007f`},
		{"c1 \u009b31m \u0085 \u009d", `c1 \u009b31m \u0085 \u009d`},
		{"8-bit csi \x9b2J and \xff\xfe", `8-bit csi \x9b2J and \xff\xfe`},
		{`a backslash \ stays`, `a backslash \ stays`},
	} {
		got := Line(tc.in)
		if got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if i := firstUnsafe(got, false); i >= 0 {
			t.Errorf("Line(%q) = %q still holds an unsafe byte at %d", tc.in, got, i)
		}
	}
}

func TestText(t *testing.T) {
	in := "{\n  \"a\": \"x\u009by\x1b[2J\",\r\n\t\"b\": 1\n}\n"
	want := "{\n  \"a\": \"x\\u009by\\u001b[2J\", \n \"b\": 1\n}\n"
	if got := Text(in); got != want {
		t.Fatalf("Text(%q) = %q, want %q", in, got, want)
	}
	var v any
	if err := json.Unmarshal([]byte(Text(in)), &v); err != nil {
		t.Fatal(err)
	}
}

// A JSON line keeps its value: the escapes are JSON's.
func TestLineKeepsJSON(t *testing.T) {
	in := "{\"activity\":\"a\u009bb\x7fc\",\t\"x\":\"\\u001b\"}"
	out := Line(in)
	if strings.ContainsAny(out, "\u009b\x7f\t") {
		t.Fatalf("Line left a control: %q", out)
	}
	var a, b map[string]any
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if a["activity"] != b["activity"] || a["x"] != b["x"] {
		t.Fatalf("value changed: %v → %v", a, b)
	}
}

func TestLineSafeTextUnchanged(t *testing.T) {
	s := "already safe: lcwrap status, ✓ completed"
	if n := testing.AllocsPerRun(100, func() { _ = Line(s) }); n != 0 {
		t.Errorf("%v allocations for safe text", n)
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\x1b[31mb", "\xff", "\u009b", "\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if Unsafe(r) {
				t.Fatalf("Line(%q) = %q holds %U", s, out, r)
			}
		}
		if firstUnsafe(s, false) < 0 && out != s {
			t.Fatalf("safe %q changed to %q", s, out)
		}
	})
}
