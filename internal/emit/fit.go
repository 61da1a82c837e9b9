package emit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
)

// MaxLine bounds the line of one event, newline included: the line cap
// every reader applies, less room for the journalSequence a journal adds.
const MaxLine = linereader.DefaultMaxBytes - 128

// CutKey is the details member of an event that was cut to fit one line:
// {"bytes": bytes cut, "fields": the details members cut}.
const CutKey = "cut"

// errTooLong: an event over MaxLine whose details cannot be cut to fit.
var errTooLong = errors.New("over the line cap and nothing in its details to cut")

// fit cuts the details of ev, whose line is over MaxLine, until it fits:
// the largest string or array in them is shortened each round (a string
// keeps its start and ends "…[cut N bytes]"; an array keeps its first
// elements and ends "…[cut N elements, M bytes]"), and details.cut says
// how many bytes went from which members. An event is cut, never
// dropped; only one with nothing in its details to cut is refused.
func fit(ev event.Event, line []byte) (event.Event, []byte, error) {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(ev.Details))
	dec.UseNumber()
	if len(ev.Details) == 0 || dec.Decode(&d) != nil {
		return ev, nil, fmt.Errorf("emit: a %s event of %d bytes: %w", ev.Kind, len(line), errTooLong)
	}
	full, total := len(line), 0
	fields := map[string]bool{}
	for range 64 {
		over := len(line) - MaxLine
		if over <= 0 {
			if err := ev.Validate(); err != nil {
				return ev, nil, fmt.Errorf("emit: a %s event cut to fit one line: %w", ev.Kind, err)
			}
			return ev, line, nil
		}
		top, gone, ok := cutLargest(d, over+64)
		if !ok {
			break
		}
		fields[top], total = true, total+gone
		names := slices.Sorted(maps.Keys(fields))
		d[CutKey] = map[string]any{"bytes": total, "fields": names}
		raw, err := json.Marshal(d)
		if err != nil {
			return ev, nil, err
		}
		ev.Details = raw
		if line, err = ev.Marshal(); err != nil {
			return ev, nil, err
		}
		line = append(line, '\n')
	}
	return ev, nil, fmt.Errorf("emit: a %s event of %d bytes: %w", ev.Kind, full, errTooLong)
}

// cutLargest shortens the largest string or array in the details d by
// about need bytes; it returns the top-level member it cut in and the
// bytes it cut.
func cutLargest(d map[string]any, need int) (string, int, bool) {
	var top string
	var best any
	var bestSize int
	var parent any
	var key any
	var walk func(v, par any, k any, t string)
	walk = func(v, par any, k any, t string) {
		switch x := v.(type) {
		case string:
			if n := len(x); n > bestSize {
				best, bestSize, parent, key, top = x, n, par, k, t
			}
		case []any:
			if n := jsonSize(x); n > bestSize && len(x) > 1 {
				best, bestSize, parent, key, top = x, n, par, k, t
			}
			for i, e := range x {
				walk(e, x, i, t)
			}
		case map[string]any:
			for mk, e := range x {
				walk(e, x, mk, t)
			}
		}
	}
	for k, v := range d {
		if k != CutKey {
			walk(v, d, k, k)
		}
	}
	if best == nil {
		return "", 0, false
	}
	var repl any
	var gone int
	switch x := best.(type) {
	case string:
		keep := max(len(x)-need, 0)
		for keep > 0 && !utf8.RuneStart(x[keep]) {
			keep--
		}
		gone = len(x) - keep
		repl = fmt.Sprintf("%s…[cut %d bytes]", x[:keep], gone)
	case []any:
		// Drop elements from the end until need bytes are gone; keep at
		// least one, and say what went.
		n := len(x)
		for n > 1 && gone < need {
			n--
			gone += jsonSize(x[n]) + 1
		}
		if n == len(x) {
			return "", 0, false
		}
		repl = append(x[:n:n], fmt.Sprintf("…[cut %d elements, %d bytes]", len(x)-n, gone))
	}
	switch p := parent.(type) {
	case map[string]any:
		p[key.(string)] = repl
	case []any:
		p[key.(int)] = repl
	}
	return top, gone, true
}

func jsonSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
