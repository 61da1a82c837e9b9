package lastline

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLine bounds the bytes of one output line kept: far more than the 512
// characters an activity event carries, so that redaction still sees a
// secret whole where the event's cut falls.
const MaxLine = 16 << 10

// Tap follows the lines of one output stream (a stream.Tap) and offers
// the latest complete one that says something, at most once per chunk.
// It looks at every chunk once, with bytes.IndexByte and
// bytes.LastIndexByte; only the last line of a chunk is ever turned into
// text.
type Tap struct {
	// Offer receives the text and From; it runs on the stream's copy
	// goroutine and must not block.
	Offer   func(text, from string)
	From    string // "stdout", "stderr", "stdout+stderr" or "pty"
	partial []byte // the unfinished line (see extend)
}

// Write takes a chunk of the child's output.
func (t *Tap) Write(p []byte) {
	if bytes.IndexByte(p, '\n') < 0 {
		t.extend(p)
		return
	}
	last := bytes.LastIndexByte(p, '\n')
	// The newest line that says something: empty lines (and lines of
	// nothing but escape sequences) are skipped.
	for end := last; ; {
		start := bytes.LastIndexByte(p[:end], '\n')
		var line []byte
		if start < 0 {
			t.extend(p[:end])
			line = t.partial
		} else {
			line = p[start+1 : end]
		}
		if text := Text(line); text != "" {
			t.Offer(text, t.From)
			break
		}
		if start < 0 {
			break
		}
		end = start
	}
	t.partial = t.partial[:0]
	t.extend(p[last+1:])
}

// End takes the end of the stream: an unfinished last line counts as a
// line.
func (t *Tap) End() {
	if text := Text(t.partial); text != "" {
		t.Offer(text, t.From)
	}
	t.partial = t.partial[:0]
}

// extend adds a piece of an unfinished line. What a carriage return
// followed by more text overwrote is dropped at once, so that a progress
// line redrawn a million times keeps only its latest text; the kept line
// is cut at MaxLine bytes (later redraws still replace it).
func (t *Tap) extend(p []byte) {
	body := bytes.TrimRight(p, "\r") // a trailing CR may yet be a CRLF
	switch {
	case bytes.IndexByte(body, '\r') >= 0:
		t.partial = t.partial[:0]
		p = p[bytes.LastIndexByte(body, '\r')+1:]
	case len(body) > 0 && len(t.partial) > 0 && t.partial[len(t.partial)-1] == '\r':
		t.partial = t.partial[:0]
	}
	if room := MaxLine - len(t.partial); room > 0 {
		t.partial = append(t.partial, p[:min(len(p), room)]...)
	}
}

// Text is what one line of output says: the text after its last
// carriage return (the one a redrawn progress line shows), without
// terminal escape sequences (CSI, OSC and the other strings, charset
// selections, ...) or control characters (a tab is a space), as valid
// UTF-8 without leading or trailing white space, at most MaxLine bytes.
// It is empty when nothing is left. Redaction and the 512-character cut
// come later, when the line becomes an event.
func Text(line []byte) string {
	line = bytes.TrimRight(line, "\r")
	if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	out := make([]byte, 0, min(len(line), MaxLine))
	for i := 0; i < len(line) && len(out) < MaxLine; {
		c := line[i]
		switch {
		case c == 0x1b:
			j := skipEscape(line, i)
			// A TUI moves the cursor where a plain line has spaces
			// ("● high · /effort" drawn as "●\x1b[1Chigh"): one space.
			if movesCursor(line[i:j]) && len(out) > 0 && out[len(out)-1] != ' ' {
				out = append(out, ' ')
			}
			i = j
		case c == '\t':
			out = append(out, ' ')
			i++
		case c < 0x20 || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(line[i:])
			switch {
			case r >= 0x80 && r <= 0x9f: // C1 controls
			case r == utf8.RuneError && n == 1:
				out = utf8.AppendRune(out, utf8.RuneError)
			default:
				out = append(out, line[i:i+n]...)
			}
			i += n
		}
	}
	s := strings.TrimSpace(string(out))
	for len(s) > MaxLine {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	if onlyDigits(s) {
		return "" // a countdown or a counter redrawn ("33", "1"), not what the child is doing
	}
	return s
}

// movesCursor reports whether esc (one whole escape sequence) is a CSI
// that moves the cursor along or across lines (CUU, CUD, CUF, CNL, CPL,
// CHA, CUP, HPA, HPR, VPA, VPR, HVP); moving back (CUB) overwrites, it
// separates nothing.
func movesCursor(esc []byte) bool {
	if len(esc) < 3 || esc[1] != '[' {
		return false
	}
	return strings.IndexByte("ABCEFGH`adef", esc[len(esc)-1]) >= 0
}

// onlyDigits reports whether s is a number and nothing else.
func onlyDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// skipEscape returns the index just past the escape sequence starting at
// line[i] (an ESC). An unfinished sequence runs to the end of the line.
func skipEscape(line []byte, i int) int {
	i++
	if i == len(line) {
		return i
	}
	switch c := line[i]; {
	case c == '[': // CSI: parameters, intermediates, one final byte
		for i++; i < len(line); i++ {
			if b := line[i]; b < 0x20 || b > 0x3f {
				if b >= 0x40 && b <= 0x7e {
					i++
				}
				return i
			}
		}
		return i
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \).
		for i++; i < len(line); i++ {
			switch line[i] {
			case 0x07:
				return i + 1
			case 0x1b:
				if i+1 < len(line) && line[i+1] == '\\' {
					return i + 2
				}
			}
		}
		return i
	case c >= 0x20 && c <= 0x2f: // intermediates (charset selections: ESC ( B), then a final byte
		for i < len(line) && line[i] >= 0x20 && line[i] <= 0x2f {
			i++
		}
		if i < len(line) && line[i] >= 0x30 && line[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e: // ESC 7, ESC =, ESC M, ...
		return i + 1
	}
	return i // a lone ESC
}
