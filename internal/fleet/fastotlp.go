package fleet

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/lazy"
)

// decodeFast decodes one OTLP-JSON logs request as the file exporter
// writes it, without reflection or a separate validation pass: the
// wrapping around each journal line is most of a fleet reader's work.
// It answers only when it is sure encoding/json (decodeSlow) would
// answer the same; on anything else — invalid JSON, a known field of
// another type, a repeated or differently cased known key, a string that
// is not valid UTF-8 — ok is false and the caller decodes the slow way.
// FuzzFastDecode checks the two agree. The records' bodies are b's own
// bytes, or fresh ones where a body has escapes.
func decodeFast(b []byte) (out []rawRecord, ok bool) {
	var d fastDecoder
	return d.decode(b)
}

// fastDecoder is decodeFast with buffers kept from one request to the
// next: the records and their unescaped bodies (the arena). What decode
// returns is valid until its next call.
type fastDecoder struct {
	recs  []rawRecord
	arena []byte
	hosts map[string]string // host names seen, so that a name costs one string
	one   [1]segment
}

// maxHosts bounds fastDecoder.hosts.
const maxHosts = 1 << 14

func (d *fastDecoder) decode(b []byte) ([]rawRecord, bool) {
	if cap(d.arena) < len(b) {
		// Unescaping shortens: the bodies of b fit in len(b) bytes, so
		// the arena never grows while records point into it.
		d.arena = make([]byte, 0, len(b)+len(b)/4)
	}
	s := scanner{b: b, arena: d.arena[:0], recs: d.recs[:0], hosts: d.hosts}
	defer func() { d.recs, d.arena, d.hosts = s.recs[:0], s.arena[:0], s.hosts }()
	s.ws()
	seen := false
	ok := s.object(func(key []byte) bool {
		switch {
		case string(key) == "resourceLogs":
			if seen {
				return false
			}
			seen = true
			return s.array(s.resourceLogs)
		case bytes.EqualFold(key, []byte("resourceLogs")):
			return false
		}
		return s.skip()
	})
	if !ok || !seen {
		return nil, false
	}
	s.ws()
	return s.recs, s.i == len(s.b)
}

type scanner struct {
	b     []byte
	i     int
	depth int
	// arena holds the strings that had escapes, unescaped; recs the
	// records read so far; hosts the host names seen.
	arena []byte
	recs  []rawRecord
	hosts map[string]string
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space (0 at the end).
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object reads an object, calling member with each key (its raw bytes,
// which must hold no escape) to read the value.
func (s *scanner) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		key, esc, ok := s.str()
		if !ok || esc {
			return false
		}
		if s.peek() != ':' {
			return false
		}
		s.i++
		if !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem to read each element; null is not
// taken (the slow path leaves the field as it was).
func (s *scanner) array(elem func() bool) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// strClass sorts the bytes of a JSON string: plain (0: copied as they
// are), the closing quote, the escape, a control character (never valid
// inside a string) and the first byte of a multi-byte UTF-8 sequence. The
// table is made on first use: package initialisation is on
// every process's start-up path.
var strClass = lazy.Value[*[256]byte]{Make: func() *[256]byte {
	var t [256]byte
	for c := range 0x20 {
		t[c] = classCtl
	}
	t['"'], t['\\'] = classQuote, classEscape
	for c := 0x80; c < 0x100; c++ {
		t[c] = classHigh
	}
	return &t
}}

const (
	classPlain = iota
	classQuote
	classEscape
	classCtl
	classHigh
)

// str reads a string: its raw bytes between the quotes, whether it has
// an escape; ok is false for anything but a valid JSON string.
func (s *scanner) str() (raw []byte, esc, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	b, cls := s.b, strClass.Get()
	start := s.i + 1
	for i := start; i < len(b); {
		switch cls[b[i]] {
		case classPlain, classHigh:
			i++
		case classQuote:
			s.i = i + 1
			return b[start:i], esc, true
		case classEscape:
			n := escapeLen(b[i:])
			if n == 0 {
				return nil, false, false
			}
			esc = true
			i += n
		default:
			return nil, false, false
		}
	}
	return nil, false, false
}

// escapeLen is the length of the valid escape b starts with (b[0] is a
// backslash), 0 for an invalid one.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 || !isHex(b[2]) || !isHex(b[3]) || !isHex(b[4]) || !isHex(b[5]) {
			return 0
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// text reads a string value as Go text, in one pass: the input's own
// bytes when the string has no escape, else its text unescaped into the
// arena. It is nil, false when the value is not a valid string, has
// invalid UTF-8 (encoding/json would replace it) or a lone surrogate
// escape.
func (s *scanner) text() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	b, cls := s.b, strClass.Get()
	start := s.i + 1
	i := start
	for i < len(b) {
		switch cls[b[i]] {
		case classPlain:
			i++
			continue
		case classQuote:
			s.i = i + 1
			return b[start:i], true
		case classHigh:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			i += n
			continue
		case classEscape:
			return s.unescape(start, i)
		}
		return nil, false
	}
	return nil, false
}

// unescape goes on with a string that starts at start and has its first
// escape at i, writing its text to the arena.
func (s *scanner) unescape(start, i int) ([]byte, bool) {
	b, cls := s.b, strClass.Get()
	out := append(s.arena, b[start:i]...)
	mark := len(s.arena)
	for i < len(b) {
		c := b[i]
		switch cls[c] {
		case classPlain:
			j := i + 1
			for j < len(b) && cls[b[j]] == classPlain {
				j++
			}
			out = append(out, b[i:j]...)
			i = j
			continue
		case classQuote:
			s.i = i + 1
			s.arena = out
			return out[mark:len(out):len(out)], true
		case classHigh:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			out = append(out, b[i:i+n]...)
			i += n
			continue
		case classCtl:
			return nil, false
		}
		n := escapeLen(b[i:])
		if n == 0 {
			return nil, false
		}
		if n == 2 {
			out = append(out, unescaped[b[i+1]])
			i += 2
			continue
		}
		r := rune(hex4(b[i+2 : i+6]))
		i += 6
		if utf16.IsSurrogate(r) {
			if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' || escapeLen(b[i:]) != 6 {
				return nil, false
			}
			d := utf16.DecodeRune(r, rune(hex4(b[i+2:i+6])))
			if d == utf8.RuneError {
				return nil, false
			}
			r = d
			i += 6
		}
		out = utf8.AppendRune(out, r)
	}
	return nil, false
}

// unescaped is the byte a two-byte escape stands for, by its letter.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func hex4(b []byte) int {
	n := 0
	for _, c := range b {
		n <<= 4
		switch {
		case c <= '9':
			n |= int(c - '0')
		case c >= 'a':
			n |= int(c-'a') + 10
		default:
			n |= int(c-'A') + 10
		}
	}
	return n
}

// maxDepth bounds the nesting skip follows (encoding/json's is 10,000;
// deeper is left to it).
const maxDepth = 200

// skip reads any one value, checking it is valid JSON.
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '{' || c == '[':
		if s.depth++; s.depth > maxDepth {
			return false
		}
		defer func() { s.depth-- }()
		if c == '{' {
			return s.object(func([]byte) bool { return s.skip() })
		}
		return s.array(s.skip)
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	case c == '-' || '0' <= c && c <= '9':
		_, ok := s.number()
		return ok
	}
	return false
}

func (s *scanner) word(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

// number reads a JSON number and returns its bytes.
func (s *scanner) number() ([]byte, bool) {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// members reads an object whose known keys are names, each read by
// read(its index) at most once, in any order; other keys are skipped. A
// repeated or differently cased known key is left to the slow path.
func (s *scanner) members(names []string, read func(i int) bool) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		for i, n := range names {
			if string(key) == n {
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return read(i)
			}
		}
		for _, n := range names {
			if bytes.EqualFold(key, []byte(n)) {
				return false
			}
		}
		return s.skip()
	})
}

// flex reads a flexInt: a number or a string of one, or null.
func (s *scanner) flex(v *int64, set *bool) bool {
	switch s.peek() {
	case 'n':
		return s.word("null")
	case '"':
		raw, _, ok := s.str()
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return false
		}
		*v, *set = n, true
		return true
	}
	num, ok := s.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return false
	}
	*v, *set = n, true
	return true
}

// The known keys of each object the reader looks into.
var (
	resourceLogsKeys = []string{"resource", "scopeLogs"}
	attributesKey    = []string{"attributes"}
	logRecordsKey    = []string{"logRecords"}
	logRecordKeys    = []string{"observedTimeUnixNano", "body", "attributes"}
	kvKeys           = []string{"key", "value"}
	anyValueKeys     = []string{"stringValue", "intValue"}
)

// anyValue is an OTLP AnyValue: its string and its int, when set.
type anyValue struct {
	str   []byte
	isStr bool
	num   int64
	isNum bool
}

func (s *scanner) anyValue(v *anyValue) bool {
	if s.peek() == 'n' {
		return s.word("null")
	}
	return s.members(anyValueKeys, func(i int) bool {
		if i == 1 {
			return s.flex(&v.num, &v.isNum)
		}
		if s.peek() == 'n' {
			return s.word("null")
		}
		t, ok := s.text()
		v.str, v.isStr = t, ok
		return ok
	})
}

// attributes reads a list of key-value pairs, calling kv with each.
func (s *scanner) attributes(kv func(key []byte, v *anyValue)) bool {
	if s.peek() == 'n' {
		return s.word("null")
	}
	return s.array(func() bool {
		var key []byte
		var v anyValue
		if s.peek() == 'n' {
			return s.word("null")
		}
		ok := s.members(kvKeys, func(i int) bool {
			if i == 1 {
				return s.anyValue(&v)
			}
			if s.peek() == 'n' {
				return s.word("null")
			}
			t, ok := s.text()
			key = t
			return ok
		})
		if ok {
			kv(key, &v)
		}
		return ok
	})
}

func (s *scanner) resourceLogs() bool {
	if s.peek() == 'n' {
		return false
	}
	var host, hostID []byte
	first := len(s.recs)
	ok := s.members(resourceLogsKeys, func(i int) bool {
		if s.peek() == 'n' {
			return false
		}
		if i == 0 { // resource
			return s.members(attributesKey, func(int) bool {
				return s.attributes(func(key []byte, v *anyValue) {
					switch string(key) {
					case AttrHostName:
						if v.isStr {
							host = v.str
						}
					case AttrHostID:
						if v.isStr {
							hostID = v.str
						}
					}
				})
			})
		}
		return s.array(func() bool { // scopeLogs
			if s.peek() == 'n' {
				return false
			}
			return s.members(logRecordsKey, func(int) bool {
				if s.peek() == 'n' {
					return false
				}
				return s.array(s.logRecord)
			})
		})
	})
	if !ok {
		return false
	}
	h, id := s.name(host), s.name(hostID)
	for i := first; i < len(s.recs); i++ {
		s.recs[i].host, s.recs[i].hostID = h, id
	}
	return true
}

// name is b as a string, the same string for the same bytes while the
// decoder keeps its names (a host's name is in every request it sends).
func (s *scanner) name(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if n, ok := s.hosts[string(b)]; ok {
		return n
	}
	n := string(b)
	if s.hosts == nil {
		s.hosts = map[string]string{}
	}
	if len(s.hosts) < maxHosts {
		s.hosts[n] = n
	}
	return n
}

func (s *scanner) logRecord() bool {
	if s.peek() == 'n' {
		return false
	}
	var r rawRecord
	var observedSet bool
	ok := s.members(logRecordKeys, func(i int) bool {
		switch i {
		case 0:
			return s.flex(&r.observedNs, &observedSet)
		case 1:
			var v anyValue
			if !s.anyValue(&v) {
				return false
			}
			if v.isStr {
				r.body, r.bodyString = v.str, true
			}
			return true
		}
		return s.attributes(func(key []byte, v *anyValue) {
			if string(key) == AttrReceivedAt && v.isNum {
				r.receivedNs = v.num
			}
		})
	})
	if ok {
		s.recs = append(s.recs, r)
	}
	return ok
}
