package linereader

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

type gotLine struct {
	number, offset, size int64
	text                 string
	problem              Problem
}

func readAll(t *testing.T, r io.Reader, max int) []gotLine {
	t.Helper()
	lr := New(r, max)
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
			{2, 2, 41, long[:40], Oversized},
			{3, 43, 5, "bad\xff", InvalidUTF8},
			{4, 48, 1, "", ""},
			{5, 49, 4, "last", Truncated},
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
	if got[1].problem != Oversized || got[1].size != int64(len(huge)+1) || len(got[1].text) > OversizedKeep {
		t.Errorf("huge line: %v size %d kept %d", got[1].problem, got[1].size, len(got[1].text))
	}
	if got[2].text != "after" || got[2].offset != int64(6+len(huge)+1) {
		t.Errorf("line after huge: %+v", got[2])
	}
	if got[3].problem != Oversized || got[3].size != int64(len(huge)) {
		t.Errorf("unterminated huge final line: %+v", got[3].problem)
	}
}

func TestLineReaderFollow(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("one\ntw")
	lr := New(&buf, 0)
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

// FuzzLineReader: any input, any line cap: no panic, every byte accounted
// for, offsets contiguous, and lines within the cap come back whole.
func FuzzLineReader(f *testing.F) {
	testtool.SeedLines(f, "../../testdata/streams/*")
	f.Add([]byte("a\nb\n\xff\nlast"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, max := range []int{1, 7, 64, DefaultMaxBytes} {
			lr := New(bytes.NewReader(in), max)
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
				if l.Problem == "" || l.Problem == InvalidUTF8 {
					if !bytes.Equal(l.Bytes, in[l.Offset:l.Offset+int64(len(l.Bytes))]) {
						t.Fatalf("line bytes differ from input")
					}
				}
			}
			if off != int64(len(in)) {
				t.Fatalf("max %d: consumed %d of %d bytes", max, off, len(in))
			}
		}
	})
}
