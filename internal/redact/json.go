package redact

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// jsonText redacts a JSON document in place: keys, punctuation, numbers
// under keys that are not sensitive and the layout stay byte for byte;
// string values go through Text, and a string given to a key named after
// a provider is hidden when it has that provider's key shape; every scalar
// under a sensitive key (and every scalar nested in a container under one)
// becomes "[REDACTED]". The result is valid JSON with the same keys. ok is false when s is not one
// JSON value (the caller redacts it as text).
func jsonText(s string) (out string, ok bool) {
	if !json.Valid([]byte(s)) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(s))
	w := jsonWalker{s: s, b: &b}
	w.value("", false)
	if w.bad {
		return "", false
	}
	b.WriteString(s[w.last:])
	return b.String(), true
}

type jsonWalker struct {
	s    string
	i    int
	b    *strings.Builder
	last int // s[last:i] is not copied to b yet
	bad  bool
}

func (w *jsonWalker) ws() {
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// more reads what follows a member or element: a comma (true: another
// follows) or the closing byte (false); anything else marks the text bad
// (false).
func (w *jsonWalker) more(closing byte) bool {
	w.ws()
	if w.i < len(w.s) && w.s[w.i] == ',' {
		w.i++
		return true
	}
	if w.i < len(w.s) && w.s[w.i] == closing {
		w.i++
		return false
	}
	w.bad = true
	return false
}

// replace replaces s[from:w.i] with r.
func (w *jsonWalker) replace(from int, r string) {
	w.b.WriteString(w.s[w.last:from])
	w.b.WriteString(r)
	w.last = w.i
}

const markerJSON = `"` + Marker + `"`

// value walks one value given to key ("" at the top); hide says it lies
// under a sensitive key.
func (w *jsonWalker) value(key string, hide bool) {
	w.ws()
	if w.i >= len(w.s) {
		w.bad = true
		return
	}
	switch c := w.s[w.i]; c {
	case '{':
		w.i++
		for {
			w.ws()
			if w.i < len(w.s) && w.s[w.i] == '}' {
				w.i++
				return
			}
			k, ok := w.str()
			if !ok {
				w.bad = true
				return
			}
			w.ws()
			if w.i >= len(w.s) || w.s[w.i] != ':' {
				w.bad = true
				return
			}
			w.i++
			w.value(k, hide || SensitiveKey(k) && !countKey(k))
			if w.bad {
				return
			}
			if !w.more('}') {
				return
			}
		}
	case '[':
		w.i++
		for {
			w.ws()
			if w.i < len(w.s) && w.s[w.i] == ']' {
				w.i++
				return
			}
			w.value(key, hide)
			if w.bad {
				return
			}
			if !w.more(']') {
				return
			}
		}
	case '"':
		from := w.i
		v, ok := w.str()
		if !ok {
			w.bad = true
			return
		}
		switch {
		case hide:
			if v != Marker {
				w.replace(from, markerJSON)
			}
		case key != "" && assignSecret(key, v):
			w.replace(from, markerJSON)
		default:
			if r := Text(v); r != v {
				w.replace(from, quoteJSON(r))
			}
		}
	default:
		// A number, true, false or null.
		from := w.i
		for w.i < len(w.s) && !strings.ContainsRune(",}] \t\n\r", rune(w.s[w.i])) {
			w.i++
		}
		if lit := w.s[from:w.i]; hide && lit != "true" && lit != "false" && lit != "null" {
			w.replace(from, markerJSON)
		}
	}
}

// str reads a string literal and returns its decoded value.
func (w *jsonWalker) str() (string, bool) {
	if w.i >= len(w.s) || w.s[w.i] != '"' {
		return "", false
	}
	start := w.i
	w.i++
	plain := true
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case '\\':
			plain = false
			w.i += 2
			continue
		case '"':
			w.i++
			lit := w.s[start:w.i]
			if plain {
				return lit[1 : len(lit)-1], true
			}
			var v string
			if json.Unmarshal([]byte(lit), &v) != nil {
				return "", false
			}
			return v, true
		}
		w.i++
	}
	return "", false
}

// quoteJSON encodes s as a JSON string (without HTML escaping).
func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		case c < 0x20:
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
		}
	}
	b.WriteByte('"')
	return b.String()
}
