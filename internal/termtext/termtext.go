package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether a terminal would act on r rather than show it:
// the C0 controls, DEL and the C1 controls (U+0080–U+009F, which a
// terminal may take as 8-bit CSI, OSC, ...).
func Unsafe(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || Bidi(r)
}

// Bidi reports whether r is a bidirectional control: a character that
// reorders the text around it on a terminal or a page (so that
// "exe.<U+202E>txt" shows as "exe.txt" read backwards): the embeddings and
// overrides U+202A–U+202E, the isolates U+2066–U+2069, the marks U+200E,
// U+200F and U+061C.
func Bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// EscapeBidi shows each bidirectional control in s as the text <U+XXXX>
// and keeps everything else: for a page, where html escaping does the
// rest, and anywhere Line's JSON-style escapes would not read well.
func EscapeBidi(s string) string {
	if strings.IndexFunc(s, Bidi) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Bidi(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// layout reports whether r is a control that only lays text out; on one
// line it becomes a space.
func layout(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// Line returns s for one line of a terminal: layout controls become a
// space, every other unsafe character a \u escape, every byte that is not
// UTF-8 a \xNN escape. s comes back as it is when it holds none.
func Line(s string) string { return escape(s, false) }

// Text is Line for text of several lines: newlines are kept.
func Text(s string) string { return escape(s, true) }

func escape(s string, newlines bool) string {
	i := firstUnsafe(s, newlines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' && newlines:
			b.WriteByte('\n')
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case layout(r):
			b.WriteByte(' ')
		case Bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case Unsafe(r):
			b.WriteString(`\u00`)
			b.WriteString(hex2(byte(r)))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe returns the offset of the first byte escape changes, or -1.
func firstUnsafe(s string, newlines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if Unsafe(rune(c)) && !(c == '\n' && newlines) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

func hex2(c byte) string {
	h := strconv.FormatUint(uint64(c), 16)
	if len(h) == 1 {
		return "0" + h
	}
	return h
}
