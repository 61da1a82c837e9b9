package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/jsonl"
)

// FsyncMode says when appends are flushed to stable storage.
type FsyncMode int

// The --fsync modes.
const (
	FsyncTerminal FsyncMode = iota // after batches holding a terminal event (default)
	FsyncAlways                    // after every append
	FsyncNever                     // leave it to the kernel
)

// ParseFsync parses always|terminal|never.
func ParseFsync(s string) (FsyncMode, error) {
	switch s {
	case "terminal", "":
		return FsyncTerminal, nil
	case "always":
		return FsyncAlways, nil
	case "never":
		return FsyncNever, nil
	}
	return 0, fmt.Errorf("--fsync %q: use always, terminal or never", s)
}

// Options configures a Journal. Zero values mean the defaults.
type Options struct {
	LockTimeout  time.Duration // default 5s
	StaleAfter   time.Duration // default 30s
	Fsync        FsyncMode
	MaxLineBytes int // default jsonl.DefaultMaxLineBytes
}

// DefaultPath resolves the default journal: $LCWRAP_JOURNAL, else
// $XDG_STATE_HOME/lcwrap/journal.jsonl, else ~/.local/state/lcwrap/journal.jsonl.
func DefaultPath() (string, error) {
	if p := os.Getenv("LCWRAP_JOURNAL"); p != "" {
		return p, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "lcwrap", "journal.jsonl"), nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no journal path: set LCWRAP_JOURNAL, XDG_STATE_HOME or HOME: %w", err)
		}
	}
	return filepath.Join(home, ".local", "state", "lcwrap", "journal.jsonl"), nil
}

// Journal is the process-wide writer of one journal file.
type Journal struct {
	path string
	opts Options
	mu   sync.Mutex
}

var (
	openMu   sync.Mutex
	journals = map[string]*Journal{}
)

// Open returns the writer for path, creating the directory (0700) and the
// file (0600) when missing. Calls for the same path share one writer.
func Open(path string, opts Options) (*Journal, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	openMu.Lock()
	defer openMu.Unlock()
	if j, ok := journals[abs]; ok {
		return j, nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	j := &Journal{path: abs, opts: opts}
	journals[abs] = j
	return j, nil
}

// Path returns the journal's absolute path.
func (j *Journal) Path() string { return j.path }

// Append writes lines (encoded events without newline or journalSequence)
// with consecutive journalSequence numbers and returns the first one.
func (j *Journal) Append(lines [][]byte, sync bool) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	lock := j.path + ".lock"
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := os.Mkdir(lock, 0o700); err == nil {
			break
		} else if !errors.Is(err, os.ErrExist) || time.Now().After(deadline) {
			return 0, fmt.Errorf("journal lock %s: %w", lock, err)
		}
		time.Sleep(time.Millisecond)
	}
	defer os.Remove(lock)
	data, err := os.ReadFile(j.path)
	if err != nil {
		return 0, err
	}
	next := int64(bytes.Count(data, []byte("\n"))) + 1
	var buf bytes.Buffer
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\n"))
		if len(l) == 0 || l[len(l)-1] != '}' {
			return 0, errors.New("journal: line is not a JSON object")
		}
		buf.Write(l[:len(l)-1])
		buf.WriteString(`,"journalSequence":` + strconv.FormatInt(next+int64(i), 10) + "}\n")
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	if sync {
		f.Sync()
	}
	_ = jsonl.DefaultMaxLineBytes
	return next, nil
}

// Close releases the writer.
func (j *Journal) Close() error { return nil }
