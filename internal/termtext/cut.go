package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is lcwrap's one set of helpers that shorten and tidy text for
// a line of a terminal, a table cell or a page. (The cut of an event's
// own fields to their limits, event.CutRunes, stays in the event core: it
// is on every run's path, which this package is not.)

// Clean makes foreign text safe for one line of a terminal or a cell:
// what a terminal would act on is escaped (Line: no escape sequence
// reaches the terminal) and runs of space collapse.
func Clean(s string) string {
	s = Line(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || (c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ')) {
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return s
}

// Cut shortens s to n characters (runes), marking the cut with "…".
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n-1 {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}

// CutMiddle shortens s to n characters by taking out its middle, so that
// both the start and the end of an id stay readable.
func CutMiddle(s string, n int) string {
	c := utf8.RuneCountInString(s)
	if c <= n {
		return s
	}
	if n < 5 {
		return Cut(s, n)
	}
	r := []rune(s)
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[c-tail:])
}

// Shorten is Clean then Cut.
func Shorten(s string, n int) string { return Cut(Clean(s), n) }

// Blank replaces every control character (C0, DEL, C1: escape sequences
// included) with with, keeping the rest, spacing included; for text that
// is recorded, where Line's escapes would change what was said.
func Blank(s string, with rune) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return with
		}
		return r
	}, s)
}
