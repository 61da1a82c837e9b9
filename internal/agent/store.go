package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/journal"
)

// Store keeps SessionStates in a directory, one file per session, for
// producers that run as one short process per payload (a hook). Each
// file is replaced whole (write, then rename), under an advisory lock of
// its own, so that two hook processes of one session never interleave.
type Store struct {
	Dir string
}

// MaxPending bounds the event lines a session keeps for a journal that
// could not take them; beyond it the oldest are dropped and counted.
const MaxPending = 1024

// ErrLockTimeout means another producer held the session's lock for
// longer than the caller would wait.
var ErrLockTimeout = errors.New("agent: the session's state is locked by another hook")

// Held is one session's state, locked until Unlock.
type Held struct {
	State *SessionState
	path  string
	lock  *os.File
}

// Lock locks session's state and loads it (a fresh state when there is
// none, or when the file cannot be read: then fresh is the honest
// start). It waits at most wait for the lock. Outcomes: the Held state;
// ErrLockTimeout; an error when the directory or lock file cannot be made.
func (s Store) Lock(session string, wait time.Duration) (*Held, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	base := filepath.Join(s.Dir, key(session, 80))
	f, err := os.OpenFile(base+".lock", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	switch err := journal.Flock(f, time.Now().Add(wait), &journal.Backoff{Min: 200 * time.Microsecond, Max: 10 * time.Millisecond}); {
	case errors.Is(err, journal.ErrFlockTimeout):
		f.Close()
		return nil, ErrLockTimeout
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("agent: locking %s: %w", f.Name(), err)
	}
	h := &Held{path: base + ".json", lock: f}
	h.State = &SessionState{Session: session}
	if b, err := os.ReadFile(h.path); err == nil {
		var st SessionState
		if json.Unmarshal(b, &st) == nil && st.Session == session {
			h.State = &st
		}
	}
	return h, nil
}

// Save replaces the session's file with the state.
func (h *Held) Save() error {
	b, err := json.Marshal(h.State)
	if err != nil {
		return err
	}
	tmp := h.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, h.path)
}

// Unlock releases the lock (closing the descriptor releases it too).
func (h *Held) Unlock() { h.lock.Close() }

// Queue keeps lines the journal could not take, to be written before
// anything else next time; it reports how many older lines it dropped to
// stay within MaxPending.
func (st *SessionState) Queue(lines [][]byte) (dropped int) {
	for _, l := range lines {
		st.Pending = append(st.Pending, string(l))
	}
	if n := len(st.Pending) - MaxPending; n > 0 {
		st.Pending = append([]string(nil), st.Pending[n:]...)
		st.Dropped += n
		return n
	}
	return 0
}
