package jsonl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

type gotLine struct {
	number, offset, size int64
	text                 string
	problem              Class
}

func readAll(t *testing.T, r io.Reader, max int) []gotLine {
	t.Helper()
	lr := NewLineReader(r, max)
	var out []gotLine
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, gotLine{l.Number, l.Offset, l.Size, string(l.Bytes), l.Problem})
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 40)
	in := "a\n" + long + "\nbad\xff\n\nlast"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in))} {
		got := readAll(t, r, 16)
		want := []gotLine{
			{1, 0, 2, "a", ""},
			{2, 2, 41, long[:40], ClassOversized},
			{3, 43, 5, "bad\xff", ClassInvalidUTF8},
			{4, 48, 1, "", ""},
			{5, 49, 4, "last", ClassTruncated},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d lines %+v, want %d", len(got), got, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("line %d: got %+v, want %+v", i+1, got[i], want[i])
			}
		}
	}
}

// A line longer than the whole buffer is skipped, and reading continues.
func TestLineReaderHugeLine(t *testing.T) {
	huge := strings.Repeat("y", 3<<20)
	in := "first\n" + huge + "\nafter\n" + huge
	got := readAll(t, strings.NewReader(in), 1024)
	if len(got) != 4 {
		t.Fatalf("got %d lines", len(got))
	}
	if got[1].problem != ClassOversized || got[1].size != int64(len(huge)+1) || len(got[1].text) > oversizedKeep {
		t.Errorf("huge line: %v size %d kept %d", got[1].problem, got[1].size, len(got[1].text))
	}
	if got[2].text != "after" || got[2].offset != int64(6+len(huge)+1) {
		t.Errorf("line after huge: %+v", got[2])
	}
	if got[3].problem != ClassOversized || got[3].size != int64(len(huge)) {
		t.Errorf("unterminated huge final line: %+v", got[3].problem)
	}
}

func TestLineReaderFollow(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("one\ntw")
	lr := NewLineReader(&buf, 0)
	lr.Follow = true
	l, err := lr.Next()
	if err != nil || string(l.Bytes) != "one" {
		t.Fatalf("first: %q %v", l.Bytes, err)
	}
	if _, err := lr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("partial line should wait, got %v", err)
	}
	buf.WriteString("o\n")
	l, err = lr.Next()
	if err != nil || string(l.Bytes) != "two" || l.Offset != 4 || l.Problem != "" {
		t.Fatalf("completed line: %+v %v", l, err)
	}
}

func TestDecoderBroken(t *testing.T) {
	f, err := os.Open("../../testdata/streams/broken.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDecoder(f, DecoderOptions{})
	var ids []string
	for {
		rec, err := d.Next()
		if err != nil {
			break
		}
		ids = append(ids, rec.Event.EventID)
	}
	if strings.Join(ids, ",") != "ep1/build-7/1,ep1/build-7/2,ep1/build-7/4" {
		t.Errorf("valid events around bad ones: %v", ids)
	}
	st := d.Stats()
	want := map[Class]int64{ClassMalformed: 1, ClassOversized: 1, ClassInvalidUTF8: 1, ClassSchema: 1, ClassTruncated: 1}
	for c, n := range want {
		if st.ByClass[c] != n {
			t.Errorf("class %s: %d, want %d", c, st.ByClass[c], n)
		}
	}
	if st.Valid != 3 || st.Invalid != 5 || st.Lines != 8 {
		t.Errorf("stats %+v", st)
	}
	for _, dg := range d.Diagnostics() {
		if strings.Contains(dg.Text, "sk-planted-secret") || strings.Contains(dg.Reason, "sk-planted") {
			t.Errorf("secret in diagnostic: %v", dg)
		}
		if len([]rune(dg.Text)) > MaxDiagnosticText {
			t.Errorf("diagnostic text not cut: %d", len(dg.Text))
		}
		if dg.Line == 0 {
			t.Errorf("diagnostic without line: %+v", dg)
		}
	}
}

func TestDecoderBoundsDiagnostics(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("{broken password=hunter2\n")
	}
	d := NewDecoder(strings.NewReader(b.String()), DecoderOptions{})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if n := len(d.Diagnostics()); n != MaxDiagnostics {
		t.Errorf("kept %d diagnostics, want %d", n, MaxDiagnostics)
	}
	if d.Stats().Invalid != 1000 {
		t.Errorf("counted %d", d.Stats().Invalid)
	}
	for _, dg := range d.Diagnostics() {
		if strings.Contains(dg.Text, "hunter2") {
			t.Fatalf("secret kept: %q", dg.Text)
		}
	}
}

func TestDecoderMixed(t *testing.T) {
	f, err := os.Open("../../testdata/streams/mixed.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDecoder(f, DecoderOptions{Mixed: true})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	st := d.Stats()
	if st.Valid != 8 || st.Invalid != 0 || st.Log != 6 || st.Lines != 14 {
		t.Errorf("mixed stats %+v diags %v", st, d.Diagnostics())
	}
	// A damaged event in a mixed stream is an error, not a log line.
	d = NewDecoder(strings.NewReader("log line\n{\"schemaVersion\":1,\"eventId\":\n"), DecoderOptions{Mixed: true})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if st := d.Stats(); st.Log != 1 || st.Invalid != 1 {
		t.Errorf("damaged event in mixed stream: %+v", st)
	}
}

// FuzzLineReader: any input, any line cap: no panic, every byte accounted
// for, offsets contiguous, and lines within the cap come back whole.
func FuzzLineReader(f *testing.F) {
	addLines(f, "../../testdata/streams/*")
	f.Add([]byte("a\nb\n\xff\nlast"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, max := range []int{1, 7, 64, DefaultMaxLineBytes} {
			lr := NewLineReader(bytes.NewReader(in), max)
			var off int64
			for {
				l, err := lr.Next()
				if err != nil {
					break
				}
				if l.Offset != off {
					t.Fatalf("max %d: offset %d, want %d", max, l.Offset, off)
				}
				off += l.Size
				if l.Problem == "" || l.Problem == ClassInvalidUTF8 {
					if !bytes.Equal(l.Bytes, in[l.Offset:l.Offset+int64(len(l.Bytes))]) {
						t.Fatalf("line bytes differ from input")
					}
				}
			}
			if off != int64(len(in)) {
				t.Fatalf("max %d: consumed %d of %d bytes", max, off, len(in))
			}
		}
		d := NewDecoder(bytes.NewReader(in), DecoderOptions{Mixed: len(in)%2 == 0})
		for {
			rec, err := d.Next()
			if err != nil {
				break
			}
			roundTrip(t, rec.Event)
		}
		if len(d.Diagnostics()) > MaxDiagnostics {
			t.Fatal("too many diagnostics")
		}
	})
}
