package fleet

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// fpMax is how many of a file's first bytes its fingerprint covers at
// most. A gateway file's first line holds the first records it received,
// with their receive stamps, so no two files share it.
const fpMax = 4096

// Cursor is a position in a gateway's output: one log record, named by
// the file it is in, the byte offset of its line and its index among the
// records of that line. Reading "after" a cursor resumes with the record
// that follows it.
//
// The file exporter rotates by renaming its live file, so a name alone
// does not survive rotation: the cursor also carries a fingerprint of the
// file's first bytes (up to fpMax, and never past the end of the
// cursor's own line, so it is known as soon as the record is), by which
// the file is found again under its new name.
//
// Its string form, used by `tail --fleet --after` and as an SSE id, is
//
//	FILE:OFFSET:INDEX:FINGERPRINT
//
// e.g. "gateway.jsonl:20931:3:9f3a0c1b2d4e5f60": FILE is the file's base
// name when the record was read, OFFSET the decimal byte offset of the
// line, INDEX the record's 0-based position in the line, FINGERPRINT 16
// hex digits (FNV-1a, 64 bits). It is parsed from the right, so FILE may
// hold a colon.
type Cursor struct {
	File   string
	Offset int64
	Index  int
	FP     uint64
}

// String returns the cursor's string form.
func (c Cursor) String() string {
	return fmt.Sprintf("%s:%d:%d:%016x", c.File, c.Offset, c.Index, c.FP)
}

// IsZero reports whether c is the zero cursor (before everything).
func (c Cursor) IsZero() bool { return c == Cursor{} }

// ErrCursor is wrapped by every error of ParseCursor.
var ErrCursor = errors.New("not a fleet cursor")

// ParseCursor reads a cursor's string form.
func ParseCursor(s string) (Cursor, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 4 {
		return Cursor{}, fmt.Errorf("%w: %q: want FILE:OFFSET:INDEX:FINGERPRINT", ErrCursor, s)
	}
	n := len(parts)
	file := strings.Join(parts[:n-3], ":")
	off, err1 := strconv.ParseInt(parts[n-3], 10, 64)
	idx, err2 := strconv.Atoi(parts[n-2])
	fp, err3 := strconv.ParseUint(parts[n-1], 16, 64)
	switch {
	case file == "" || strings.ContainsAny(file, "/\x00\n"):
		return Cursor{}, fmt.Errorf("%w: %q: FILE must be a base name", ErrCursor, s)
	case err1 != nil || off < 0:
		return Cursor{}, fmt.Errorf("%w: %q: OFFSET must be a byte offset", ErrCursor, s)
	case err2 != nil || idx < 0:
		return Cursor{}, fmt.Errorf("%w: %q: INDEX must be 0 or more", ErrCursor, s)
	case err3 != nil || len(parts[n-1]) != 16:
		return Cursor{}, fmt.Errorf("%w: %q: FINGERPRINT must be 16 hex digits", ErrCursor, s)
	}
	return Cursor{File: file, Offset: off, Index: idx, FP: fp}, nil
}

// fingerprint hashes the first bytes of a file.
func fingerprint(head []byte) uint64 {
	h := fnv.New64a()
	h.Write(head)
	return h.Sum64()
}

// fpLen is how many first bytes the fingerprint of a record whose line
// ends (before its newline) at end covers.
func fpLen(end int64) int { return int(min(end, fpMax)) }
