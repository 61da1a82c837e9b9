package tui

import (
	"io"
	"strconv"
	"strings"
)

// Screen draws frames (a model's View) on a terminal in raw mode, writing
// only the lines that differ from the frame drawn before, each placed by
// cursor position: a frame equal to the last one costs no write at all.
// It is what top uses instead of bubbletea's renderer, which redraws on a
// ticker whether or not anything changed.
type Screen struct {
	w      io.Writer
	height int
	last   []string // the lines on the screen; nil: unknown (clear first)
	buf    []byte
}

// NewScreen returns a screen writing to w (the terminal), height lines
// tall (0: unbounded until Resize).
func NewScreen(w io.Writer, height int) *Screen {
	return &Screen{w: w, height: height}
}

// Resize sets the screen's height and forgets what is on it: the next
// frame clears the screen and is drawn whole.
func (s *Screen) Resize(height int) {
	s.height, s.last = height, nil
}

// Draw shows frame: lines separated by "\n", each at most the screen's
// width (the model cuts them); lines beyond the height are not drawn. It
// writes nothing when the frame is what is shown already.
func (s *Screen) Draw(frame string) error {
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	if frame == "" {
		lines = nil
	}
	if s.height > 0 && len(lines) > s.height {
		lines = lines[:s.height]
	}
	b := s.buf[:0]
	if s.last == nil {
		b = append(b, "\x1b[H\x1b[2J"...)
	}
	// Below the last frame the screen is blank: cleared, or erased when a
	// frame was shorter than the one before.
	for i, l := range lines {
		old := ""
		if i < len(s.last) {
			old = s.last[i]
		}
		if l == old {
			continue
		}
		// Erase the line before writing it: erasing after a line that
		// fills the width would take its last character with it.
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, ";1H\x1b[2K"...)
		b = append(b, l...)
	}
	if s.last != nil && len(s.last) > len(lines) {
		// The frame is shorter than the last: erase what is below it.
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(len(lines)+1), 10)
		b = append(b, ";1H\x1b[J"...)
	}
	s.buf = b[:0]
	if len(b) == 0 {
		return nil
	}
	// Keep the lines: the frame's backing string stays alive in them.
	s.last = lines
	if s.last == nil {
		s.last = []string{}
	}
	_, err := s.w.Write(b)
	if err != nil {
		s.last = nil // draw it all again next time
	}
	return err
}
