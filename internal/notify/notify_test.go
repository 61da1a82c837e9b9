package notify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/event"
)

func TestParseNotify(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // fields as key=value|..., or "error"
	}{
		{"READY=1", "READY=1"},
		{"READY=1\nSTATUS=working on it\n", "READY=1|STATUS=working on it"},
		{"STATUS=a=b", "STATUS=a=b"},
		{"STATUS=", "STATUS="},
		{"\n\nWATCHDOG=1\n\n", "WATCHDOG=1"},
		{"x_Y_9=ü", "x_Y_9=ü"},
		{"", "error"},
		{"\n", "error"},
		{"READY", "error"},
		{"=1", "error"},
		{"READY=1\nno equals sign", "error"},
		{"MY-KEY=1", "error"},
		{"STATUS=a\x00b", "error"},
		{"STATUS=\xff", "error"},
	} {
		fields, err := Parse([]byte(tc.in))
		var got []string
		for _, f := range fields {
			got = append(got, f.Key+"="+f.Value)
		}
		s := strings.Join(got, "|")
		if err != nil {
			s = "error"
		}
		if s != tc.want {
			t.Errorf("Parse(%q) = %q (%v), want %q", tc.in, s, err, tc.want)
		}
	}
}

func FuzzParseNotify(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/notify/*")
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fields, err := Parse(b)
		if (err == nil) == (fields == nil) {
			t.Fatalf("fields %v with error %v", fields, err)
		}
		// Round trip: the fields written out again parse the same.
		var out []string
		for _, fl := range fields {
			if strings.ContainsAny(fl.Key+fl.Value, "\n\x00") || !validKey(fl.Key) {
				t.Fatalf("field %q=%q", fl.Key, fl.Value)
			}
			out = append(out, fl.Key+"="+fl.Value)
		}
		if err == nil {
			again, err := Parse([]byte(strings.Join(out, "\n")))
			if err != nil || fmt.Sprint(again) != fmt.Sprint(fields) {
				t.Fatalf("round trip: %v %v, want %v", again, err, fields)
			}
		}
		// Whatever it is, a diagnostic's excerpt of it is bounded, valid
		// and redacted.
		m := Judge(&event.FakeProcTable{}, 7, 7, len(b), b, nil)
		if len([]rune(m.Excerpt)) > MaxExcerpt || !utf8.ValidString(m.Excerpt) || (m.Problem == "") != (err == nil) {
			t.Fatalf("judged %+v", m)
		}
	})
}

func TestInTree(t *testing.T) {
	// 1 ← 10 (lcwrap) ← 20 (child) ← 30 ← 40; 10 ← 50 (a sibling).
	tbl := &event.FakeProcTable{Procs: map[int]event.ProcInfo{
		10: {PID: 10, PPID: 1}, 20: {PID: 20, PPID: 10}, 30: {PID: 30, PPID: 20},
		40: {PID: 40, PPID: 30}, 50: {PID: 50, PPID: 10}, 60: {PID: 60, PPID: 60},
	}, Fallback: &event.FakeProcTable{}}
	for _, tc := range []struct {
		pid  int
		want string // "" for accepted, else a piece of the reason
	}{
		{20, ""}, {30, ""}, {40, ""},
		{10, "neither the child nor"}, {50, "neither the child nor"}, {1, "neither"},
		{60, "neither"}, // a loop in the table ends at the bound
		{99, "has exited"},
		{0, "not visible"},
	} {
		err := InTree(tbl, tc.pid, 20)
		switch {
		case tc.want == "" && err != nil, tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("pid %d: %v, want %q", tc.pid, err, tc.want)
		}
	}
}
