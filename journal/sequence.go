package journal

import (
	"bytes"
	"fmt"
	"io"

	"github.com/lcwrap/lcwrap/jsonl"
)

// backwardChunk is how much lastSequence reads at a time.
const backwardChunk = 256 << 10

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
	buf := make([]byte, 0, backwardChunk+j.opts.MaxLineBytes+1)
	for end := size; end > 0; {
		start := max(end-backwardChunk, 0)
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
				return 0, false, fmt.Errorf("journal %s: line over %d bytes before byte %d", path, len(data), end)
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
