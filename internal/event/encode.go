package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file holds the JSON writing of decoded values (EncodeDetails writes
// every details object through it, keys sorted): strings escaped as
// encoding/json escapes them with HTML escaping off, raw JSON compacted.
// The differential tests in encode_test.go hold them to encoding/json.
// The event envelope itself is written by encoding/json (Event.Marshal);
// hand-written envelope and details encoders did not earn their place
// (docs/design.md, "Decisions").

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off: quotes, backslashes and control characters
// escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendValue appends a decoded-JSON-shaped value (maps with string keys,
// slices, strings, booleans, integers, nil, json.RawMessage, values with a
// MarshalJSON method) the way encoding/json would, map keys sorted. Other
// types (floats, structs) go through encoding/json itself.
func AppendValue(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, t), nil
	case json.Number:
		if !json.Valid([]byte(t)) {
			return b, errors.New("not a JSON number: " + strconv.Quote(string(t)))
		}
		return append(b, t...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(t), 10), nil
	case uint64:
		return strconv.AppendUint(b, t, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(t), 10), nil
	case json.RawMessage:
		if t == nil {
			return append(b, "null"...), nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, t); err != nil {
			return b, err
		}
		return append(b, buf.Bytes()...), nil
	case json.Marshaler:
		raw, err := t.MarshalJSON()
		if err != nil {
			return b, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return b, err
		}
		return append(b, buf.Bytes()...), nil
	case []string:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, s := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, s)
		}
		return append(b, ']'), nil
	case []int:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, n := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		return append(b, ']'), nil
	case []any:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendValue(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if t == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = AppendValue(b, t[k]); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}
