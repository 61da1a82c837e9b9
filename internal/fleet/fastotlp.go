package fleet

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeFast decodes one OTLP-JSON logs request as the file exporter
// writes it, without reflection or a separate validation pass: the
// wrapping around each journal line is most of a fleet reader's work.
// It answers only when it is sure encoding/json (decodeSlow) would
// answer the same; on anything else — invalid JSON, a known field of
// another type, a repeated or differently cased known key, a string that
// is not valid UTF-8 — ok is false and the caller decodes the slow way.
// FuzzFastDecode checks the two agree.
func decodeFast(b []byte) (out []rawRecord, ok bool) {
	s := scanner{b: b}
	s.ws()
	seen := false
	ok = s.object(func(key []byte) bool {
		switch {
		case string(key) == "resourceLogs":
			if seen {
				return false
			}
			seen = true
			return s.array(func() bool { return s.resourceLogs(&out) })
		case bytes.EqualFold(key, []byte("resourceLogs")):
			return false
		}
		return s.skip()
	})
	if !ok || !seen {
		return nil, false
	}
	s.ws()
	return out, s.i == len(s.b)
}

type scanner struct {
	b     []byte
	i     int
	depth int
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

// str reads a string: its raw bytes between the quotes, whether it has
// an escape; ok is false for anything but a valid JSON string.
func (s *scanner) str() (raw []byte, esc, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, esc, true
		case c == '\\':
			esc = true
			if s.i+1 >= len(s.b) {
				return nil, false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, false, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				s.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			s.i++
		}
	}
	return nil, false, false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// text reads a string value as Go text: nil, false when it is not a
// string, has invalid UTF-8 (encoding/json would replace it) or a lone
// surrogate escape.
func (s *scanner) text() ([]byte, bool) {
	raw, esc, ok := s.str()
	if !ok {
		return nil, false
	}
	if !esc {
		if !utf8.Valid(raw) {
			return nil, false
		}
		return append([]byte(nil), raw...), true
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			if !utf8.Valid(raw[i:j]) {
				return nil, false
			}
			out = append(out, raw[i:j]...)
			i = j
			continue
		}
		switch raw[i+1] {
		case 'u':
			r := rune(hex4(raw[i+2 : i+6]))
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
					return nil, false
				}
				r2 := rune(hex4(raw[i+2 : i+6]))
				d := utf16.DecodeRune(r, r2)
				if d == utf8.RuneError {
					return nil, false
				}
				r = d
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // " \ /
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out, true
}

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

func (s *scanner) resourceLogs(out *[]rawRecord) bool {
	if s.peek() == 'n' {
		return false
	}
	var host, hostID string
	var recs []rawRecord
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
							host = string(v.str)
						}
					case AttrHostID:
						if v.isStr {
							hostID = string(v.str)
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
				return s.array(func() bool { return s.logRecord(&recs) })
			})
		})
	})
	if !ok {
		return false
	}
	for i := range recs {
		recs[i].host, recs[i].hostID = host, hostID
	}
	*out = append(*out, recs...)
	return true
}

func (s *scanner) logRecord(recs *[]rawRecord) bool {
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
		*recs = append(*recs, r)
	}
	return ok
}
