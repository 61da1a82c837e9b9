package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// RepairReport says what Repair moved.
type RepairReport struct {
	Path       string
	Quarantine string        // the file holding the moved bytes; "" when nothing moved
	Blocked    *BlockedError // the first bad line; nil when the journal was clean
	KeptLines  int64
	KeptBytes  int64
	MovedLines int64 // a final line without newline counts as one
	MovedBytes int64
}

// Repair makes an append-blocked journal appendable again without losing a
// byte. Under the lock it copies everything from the first bad line to the
// end into a new file <journal>.quarantine-<UTC time> (0600), syncs it,
// checks the copy byte for byte, and only then truncates the journal to the
// valid prefix; it rewrites the checkpoint. It reads the whole journal
// (without the lock first, then what was appended meanwhile under it) and
// never trusts the checkpoint. A clean journal is left as it is.
//
// Outcomes: a RepairReport and nil; an error wrapping fs.ErrNotExist when
// there is no journal; the lock and symlink errors of Append; an I/O error,
// in which case the journal was not truncated.
func Repair(path string, opts Options) (RepairReport, error) {
	if _, err := os.Lstat(path); err != nil {
		return RepairReport{Path: path}, err
	}
	j, err := Open(path, opts)
	if err != nil {
		return RepairReport{Path: path}, err
	}
	rep, err := j.repair()
	return rep, errors.Join(err, j.Close())
}

func (j *Journal) repair() (rep RepairReport, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rep.Path = j.path
	j.reset()
	j.loaded = true // read everything: the checkpoint is not consulted
	var be *BlockedError
	if err := j.catchUp(false); err != nil && !errors.As(err, &be) {
		return rep, err
	}
	tok, err := j.lock.acquire(j.opts.LockTimeout)
	if err != nil {
		return rep, err
	}
	defer func() {
		if rerr := j.lock.release(tok); rerr != nil && err == nil {
			err = rerr
		}
	}()
	err = j.catchUp(true)
	rep.KeptLines, rep.KeptBytes = j.lines, j.size
	if err == nil {
		j.saveCheckpoint()
		return rep, nil
	}
	if !errors.As(err, &be) {
		return rep, err
	}
	rep.Blocked = be
	fi, err := j.f.Stat()
	if err != nil {
		return rep, err
	}
	tail := io.NewSectionReader(j.f, j.size, fi.Size()-j.size)
	qpath, n, err := quarantine(j.path, tail)
	if err != nil {
		return rep, err
	}
	rep.Quarantine, rep.MovedBytes, rep.MovedLines = qpath, n.bytes, n.lines
	if err := j.f.Truncate(j.size); err != nil {
		return rep, fmt.Errorf("journal %s: the bad tail is safe in %s, but truncating failed: %w", j.path, qpath, err)
	}
	if err := j.f.Sync(); err != nil {
		return rep, fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.saveCheckpoint()
	return rep, nil
}

type moved struct{ bytes, lines int64 }

// quarantine copies tail into a new quarantine file beside the journal,
// makes it durable and compares it with tail byte for byte.
func quarantine(path string, tail *io.SectionReader) (string, moved, error) {
	stamp := time.Now().UTC().Format("20060102T150405.000Z")
	var f *os.File
	var name string
	for i := 1; ; i++ {
		name = path + ".quarantine-" + stamp
		if i > 1 {
			name += fmt.Sprintf("-%d", i)
		}
		var err error
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", moved{}, fmt.Errorf("quarantine file: %w", err)
		}
	}
	defer f.Close()
	n, err := io.Copy(f, tail)
	if err == nil {
		err = f.Sync()
	}
	var lines int64
	if err == nil {
		lines, err = sameBytes(f, tail)
	}
	if err != nil {
		return "", moved{}, fmt.Errorf("quarantine file %s (journal left as it was): %w", name, err)
	}
	syncDir(filepath.Dir(path))
	return name, moved{bytes: n, lines: lines}, nil
}

// sameBytes compares f from its start with tail and counts tail's lines
// (a final one without newline included).
func sameBytes(f *os.File, tail *io.SectionReader) (int64, error) {
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	var lines int64
	for off := int64(0); off < tail.Size(); {
		k := min(int64(len(a)), tail.Size()-off)
		if _, err := f.ReadAt(a[:k], off); err != nil {
			return 0, err
		}
		if _, err := tail.ReadAt(b[:k], off); err != nil {
			return 0, err
		}
		if !bytes.Equal(a[:k], b[:k]) {
			return 0, fmt.Errorf("the copy differs from the journal at byte %d of the tail", off)
		}
		lines += int64(bytes.Count(b[:k], []byte("\n")))
		off += k
		if off == tail.Size() && b[k-1] != '\n' {
			lines++
		}
	}
	return lines, nil
}
