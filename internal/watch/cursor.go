package watch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/outpath"
)

// Position is where a follower has read to: a journal line (its
// journalSequence and the eventId on it, by which a replaced journal is
// told apart) or a fleet cursor (fleet.Cursor's string form). The zero
// Position is before everything.
type Position struct {
	Line    int64  `json:"line,omitempty"`
	EventID string `json:"eventId,omitempty"`
	Fleet   string `json:"fleet,omitempty"`
}

// IsZero reports whether p is before everything.
func (p Position) IsZero() bool { return p == Position{} }

func (p Position) String() string {
	if p.Fleet != "" {
		return p.Fleet
	}
	if p.Line == 0 {
		return "the start"
	}
	return fmt.Sprintf("line %d", p.Line)
}

// CursorSchema names the cursor file's shape.
const CursorSchema = "lcwrap-watch-cursor/1"

// MaxCursorBytes caps a cursor file.
const MaxCursorBytes = 1 << 20

// MaxStaleIDs bounds the stale ids a cursor keeps (the oldest go first;
// one that went is handed on again if its child is still stale at a
// restart: at least once).
const MaxStaleIDs = 1024

// Cursor is what a watcher stores so that a restart goes on from where it
// stopped: the input it reads (a journal's path, or a fleet's PATH), the
// Position up to which every transition was handed on and confirmed, and
// the stale ids confirmed for children still stale.
//
// Its file is one JSON object:
//
//	{"schema":"lcwrap-watch-cursor/1","input":"/home/me/.local/state/lcwrap/journal.jsonl",
//	 "position":{"line":1234,"eventId":"0193…"},"stale":["stale/build-7/0193…"]}
type Cursor struct {
	Schema   string   `json:"schema"`
	Input    string   `json:"input"`
	Position Position `json:"position"`
	Stale    []string `json:"stale,omitempty"`
}

// ErrCursorFile is wrapped by every error of ParseCursor.
var ErrCursorFile = errors.New("not a watch cursor")

// ParseCursor reads a cursor file's bytes. Outcomes: the cursor; an error
// wrapping ErrCursorFile that says what is wrong (not one JSON object,
// another schema, an unknown field, a negative line, a fleet cursor that
// does not parse, both a line and a fleet cursor, a stale id that is not
// one).
func ParseCursor(b []byte) (Cursor, error) {
	var c Cursor
	if len(b) > MaxCursorBytes {
		return c, fmt.Errorf("%w: %d bytes, more than %d", ErrCursorFile, len(b), MaxCursorBytes)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrCursorFile, err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return Cursor{}, fmt.Errorf("%w: more than one JSON value", ErrCursorFile)
	}
	if len(c.Stale) == 0 {
		c.Stale = nil
	}
	p := c.Position
	switch {
	case c.Schema != CursorSchema:
		return Cursor{}, fmt.Errorf("%w: schema %q, want %q", ErrCursorFile, c.Schema, CursorSchema)
	case c.Input == "":
		return Cursor{}, fmt.Errorf("%w: no input", ErrCursorFile)
	case p.Line < 0:
		return Cursor{}, fmt.Errorf("%w: line %d", ErrCursorFile, p.Line)
	case p.Fleet != "" && (p.Line != 0 || p.EventID != ""):
		return Cursor{}, fmt.Errorf("%w: both a journal line and a fleet cursor", ErrCursorFile)
	case p.EventID != "" && p.Line == 0:
		return Cursor{}, fmt.Errorf("%w: an eventId without a line", ErrCursorFile)
	case len(c.Stale) > MaxStaleIDs:
		return Cursor{}, fmt.Errorf("%w: %d stale ids, more than %d", ErrCursorFile, len(c.Stale), MaxStaleIDs)
	}
	if p.Fleet != "" {
		if _, err := fleet.ParseCursor(p.Fleet); err != nil {
			return Cursor{}, fmt.Errorf("%w: %v", ErrCursorFile, err)
		}
	}
	for _, id := range c.Stale {
		if !strings.HasPrefix(id, "stale/") {
			return Cursor{}, fmt.Errorf("%w: %q is not a stale id", ErrCursorFile, id)
		}
	}
	return c, nil
}

// Marshal returns the cursor file's bytes.
func (c Cursor) Marshal() []byte {
	c.Schema = CursorSchema
	b, _ := json.Marshal(c)
	return append(b, '\n')
}

// LoadCursor reads the cursor file at path. Outcomes: the cursor and
// true; false and nil when there is no file yet; an error for a file that
// cannot be read or is not a cursor (ParseCursor).
func LoadCursor(path string) (Cursor, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Cursor{}, false, nil
	}
	if err != nil {
		return Cursor{}, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxCursorBytes+1))
	if err != nil {
		return Cursor{}, false, err
	}
	c, err := ParseCursor(b)
	if err != nil {
		return Cursor{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return c, true, nil
}

// SaveCursor writes the cursor file at path (0600) the way every file a
// user names is written (internal/outpath: replaced through a temporary
// file, never renamed over a device, FIFO or symlink).
func SaveCursor(path string, c Cursor) error {
	return outpath.WriteFile(path, c.Marshal(), 0o600)
}
