package journal

import (
	"bytes"
	"fmt"
	"io"

	"github.com/lcwrap/lcwrap/internal/event"
)

// lastSequence reads backwards firstChunk bytes first, then twice as much
// each time, up to backwardChunk.
const (
	firstChunk    = 8 << 10
	backwardChunk = 256 << 10
)

// lastSequence returns the sequence of key's most recent sequenced event in
// the verified prefix (0 when there is none), reading backwards from its
// end: cheap for a key that wrote recently, the whole prefix for a new one.
// It runs under the lock, after catchUp, so the prefix is the whole file.
//
// After the live file it reads the sealed files, newest first, so a key
// keeps its sequence across a rotation.
func (j *Journal) lastSequence(key Key) (int64, error) {
	seq, found, err := j.lastSequenceIn(j.f, j.path, j.cur.off, key)
	if err != nil || found {
		return seq, err
	}
	files, err := sealedFiles(j.path)
	if err != nil {
		return 0, err
	}
	for i := len(files) - 1; i >= 0; i-- {
		f, err := openRead(files[i].path)
		if err != nil {
			continue
		}
		size, err := fileSize(f)
		if err == nil {
			seq, found, err = j.lastSequenceIn(f, files[i].path, size, key)
		}
		f.Close()
		if err != nil || found {
			return seq, err
		}
	}
	return 0, nil
}

// lastSequenceIn is lastSequence within [0, size) of one file.
func (j *Journal) lastSequenceIn(f io.ReaderAt, path string, size int64, key Key) (int64, bool, error) {
	// A cheap byte filter before parsing, when the child id reads the same
	// in any JSON encoding.
	var needle []byte
	if plainID(key.ChildID) {
		needle = []byte(key.ChildID)
	}
	var carry []byte // the start of a line whose beginning is not read yet
	// The first read is small (a key that wrote recently is found in the
	// last lines); each further one doubles, up to backwardChunk.
	chunk := int64(firstChunk)
	var buf []byte
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		if need := int(end-start) + len(carry); cap(buf) < need {
			buf = make([]byte, 0, need+j.opts.MaxLineBytes+1)
		}
		chunk = min(2*chunk, backwardChunk)
		buf = buf[:end-start]
		if _, err := f.ReadAt(buf, start); err != nil {
			return 0, false, fmt.Errorf("journal %s: %w", path, err)
		}
		buf = append(buf, carry...)
		data := buf
		if start > 0 {
			// The first segment may be the tail of a line that began
			// earlier: keep it for the next round.
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if len(data) > j.opts.MaxLineBytes+1 {
					return 0, false, fmt.Errorf("journal %s: line over %d bytes before byte %d", path, len(data), end)
				}
				// One line longer than what was read: read on before it.
				carry = append(carry[:0], data...)
				end = start
				continue
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
			ev, _, err := event.Parse(line)
			if err != nil || ev.ChildID != key.ChildID || ev.SourceEpoch != key.SourceEpoch || ev.Source != key.Source {
				continue
			}
			if seq, ok := ev.Seq(); ok {
				return seq, true, nil
			}
		}
		end = start
	}
	return 0, false, nil
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
