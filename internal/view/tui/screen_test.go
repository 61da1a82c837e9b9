package tui

import (
	"bytes"
	"testing"
)

func TestScreenDrawsOnlyWhatChanged(t *testing.T) {
	var out bytes.Buffer
	s := NewScreen(&out, 3)
	draw := func(frame, want string) {
		t.Helper()
		out.Reset()
		if err := s.Draw(frame); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Fatalf("Draw(%q) wrote %q, want %q", frame, got, want)
		}
	}
	draw("a\nb\nc", "\x1b[H\x1b[2J\x1b[1;1H\x1b[2Ka\x1b[2;1H\x1b[2Kb\x1b[3;1H\x1b[2Kc")
	draw("a\nb\nc", "")                  // the same frame: nothing
	draw("a\nB\nc", "\x1b[2;1H\x1b[2KB") // one line
	draw("a\nB\nc\nd", "")               // beyond the height: not drawn
	draw("a", "\x1b[2;1H\x1b[J")         // shorter: the rest erased
	draw("a\n\nx", "\x1b[3;1H\x1b[2Kx")  // an empty line where nothing was
	s.Resize(2)                          // a resize draws it all again
	draw("a\nb", "\x1b[H\x1b[2J\x1b[1;1H\x1b[2Ka\x1b[2;1H\x1b[2Kb")
	draw("", "\x1b[1;1H\x1b[J")
	draw("", "")
}
