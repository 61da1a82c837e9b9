package journal

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrNotBroken means BreakLock left the lock as it was.
var ErrNotBroken = errors.New("lock not broken")

// BreakLock breaks the lock of the journal at path when its owner record
// still holds token and its owner is not alive, as far as this process
// can tell: the step for a person who knows that an owner lcwrap cannot
// judge (a pid in another PID namespace or on another host, a record
// without a namespace seen from a child namespace) has exited. It takes
// the kernel lock first, acts only on the directory that holds token
// (set aside and checked as a reclaim is), and leaves the lock free. It
// returns the owner it broke, as its record said.
//
// Outcomes: the owner and nil; an error wrapping fs.ErrNotExist when
// there is no journal; an error wrapping ErrNotBroken when there
// is no lock, its record holds another token or none, its owner is alive,
// or the lock changed meanwhile (nothing was removed); the errors of
// Open and of the lock (symlink, not a directory, unsafe, timeout).
func BreakLock(path, token string, opts Options) (string, error) {
	if _, err := os.Lstat(path); err != nil {
		return "", err
	}
	j, err := Open(path, opts)
	if err != nil {
		return "", err
	}
	defer j.Close()
	j.mu.Lock()
	defer j.mu.Unlock()
	l := j.lock
	start := time.Now()
	if err := l.lockKernel(start, start.Add(j.opts.LockTimeout)); err != nil {
		return "", err
	}
	defer l.unlockKernel()
	fi, err := l.lockDir()
	if err != nil {
		return "", err
	}
	if fi == nil {
		return "", fmt.Errorf("%w: %s: there is no lock: the journal is free", ErrNotBroken, l.dir)
	}
	jd := l.judge(l.dir, fi, true)
	switch {
	case !jd.hasOwner:
		return "", fmt.Errorf("%w: %s has no usable owner record, so no token to match (%s)", ErrNotBroken, l.dir, jd.why)
	case jd.owner.Token != token:
		return "", fmt.Errorf("%w: %s is held by %s with token %s, not %s; nothing removed", ErrNotBroken, l.dir, jd.owner, jd.owner.Token, token)
	case jd.alive:
		return "", fmt.Errorf("%w: %s: %s; nothing removed", ErrNotBroken, l.dir, jd.why)
	}
	tok, ok, err := l.takeOver(fi, jd)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: %s changed while it was being broken; nothing removed", ErrNotBroken, l.dir)
	}
	if tok != "" {
		if err := l.release(tok); err != nil {
			return "", err
		}
	}
	return jd.owner.String(), nil
}
