package journal

import (
	"bytes"
	"fmt"

	"github.com/lcwrap/lcwrap/jsonl"
)

// backwardChunk is how much lastSequence reads at a time.
const backwardChunk = 256 << 10

// lastSequence returns the sequence of key's most recent sequenced event in
// the verified prefix (0 when there is none), reading backwards from its
// end: cheap for a key that wrote recently, the whole prefix for a new one.
// It runs under the lock, after catchUp, so the prefix is the whole file.
func (j *Journal) lastSequence(key Key) (int64, error) {
	// A cheap byte filter before parsing, when the child id reads the same
	// in any JSON encoding.
	var needle []byte
	if plainID(key.ChildID) {
		needle = []byte(key.ChildID)
	}
	var carry []byte // the start of a line whose beginning is not read yet
	buf := make([]byte, 0, backwardChunk+j.opts.MaxLineBytes+1)
	for end := j.size; end > 0; {
		start := max(end-backwardChunk, 0)
		buf = buf[:end-start]
		if _, err := j.f.ReadAt(buf, start); err != nil {
			return 0, fmt.Errorf("journal %s: %w", j.path, err)
		}
		buf = append(buf, carry...)
		data := buf
		if start > 0 {
			// The first segment may be the tail of a line that began
			// earlier: keep it for the next round.
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				return 0, fmt.Errorf("journal %s: line over %d bytes before byte %d", j.path, len(data), end)
			}
			carry = append(carry[:0], data[:i+1]...)
			data = data[i+1:]
		} else {
			carry = carry[:0]
		}
		data = bytes.TrimSuffix(data, []byte("\n"))
		for len(data) > 0 {
			i := bytes.LastIndexByte(data, '\n')
			line := data[i+1:]
			data = data[:max(i, 0)]
			if needle != nil && !bytes.Contains(line, needle) {
				continue
			}
			ev, _, err := jsonl.Parse(line)
			if err != nil || ev.ChildID != key.ChildID || ev.SourceEpoch != key.SourceEpoch || ev.Source != key.Source {
				continue
			}
			if seq, ok := ev.Seq(); ok {
				return seq, nil
			}
		}
		end = start
	}
	return 0, nil
}

// plainID reports whether s is written byte for byte the same by every JSON
// encoder (no escapes, no HTML-sensitive or non-ASCII characters).
func plainID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return s != ""
}
