package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/lcwrap/lcwrap/internal/linereader"
)

// checkpoint is <journal>.checkpoint: where the verified prefix ends and
// what its last line is. It is a hint that saves reading the prefix, never
// a fact: loadCheckpoint checks it against the file before using it.
type checkpoint struct {
	Version    int    `json:"version"`
	Size       int64  `json:"size"`       // bytes in the verified prefix
	Lines      int64  `json:"lines"`      // lines in it (= the last journalSequence)
	LastOffset int64  `json:"lastOffset"` // offset of its last line
	LastSHA256 string `json:"lastSha256"` // of the last line, without newline
}

// appendJSON encodes the checkpoint as encoding/json would.
func (c checkpoint) appendJSON(b []byte) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(c.Version), 10)
	for _, f := range [...]struct {
		k string
		v int64
	}{{"size", c.Size}, {"lines", c.Lines}, {"lastOffset", c.LastOffset}} {
		b = append(b, `,"`...)
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, f.v, 10)
	}
	b = append(b, `,"lastSha256":"`...)
	b = append(b, c.LastSHA256...)
	return append(b, `"}`...)
}

// parseCheckpoint reads what appendJSON writes (members in any order);
// anything else is not a checkpoint. Without reflection: a fresh writer
// reads it on its start-up path, and loadCheckpoint checks it against the
// file anyway.
func parseCheckpoint(b []byte) (checkpoint, bool) {
	var c checkpoint
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return c, false
	}
	seen := 0
	for _, m := range strings.Split(s[1:len(s)-1], ",") {
		k, v, ok := strings.Cut(m, ":")
		if !ok {
			return c, false
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == `"lastSha256"` {
			if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
				return c, false
			}
			c.LastSHA256 = v[1 : len(v)-1]
			seen++
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return c, false
		}
		switch k {
		case `"version"`:
			c.Version = int(n)
		case `"size"`:
			c.Size = n
		case `"lines"`:
			c.Lines = n
		case `"lastOffset"`:
			c.LastOffset = n
		default:
			return c, false
		}
		seen++
	}
	return c, seen == 5
}

// loadCheckpoint adopts the checkpoint when it matches the file: the file is
// at least Size bytes, the bytes from LastOffset to Size are one line
// ending in a newline whose SHA-256 is LastSHA256, and that line is a valid
// event with journalSequence Lines.
// Anything else (missing, unreadable, forged, stale) leaves the prefix
// empty, so the next catch-up rebuilds it by reading the whole file.
//
// Outcomes: nil (whether or not the checkpoint was used); an *UnsafeError
// (ErrUnsafe; also ErrSymlink for a symlink) when the checkpoint is a
// symlink, belongs to another user or others can write it.
func (j *Journal) loadCheckpoint() error {
	f, err := openFile(j.ckpt, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		if e := explainOpen(j.ckpt, "checkpoint", err); errors.Is(e, ErrUnsafe) {
			return e
		}
		return nil // missing or unreadable: the prefix is read again
	}
	if fi, err := f.Stat(); err == nil {
		if ue := checkSafe(j.ckpt, "checkpoint", fi, true); ue != nil {
			f.Close()
			return ue
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil // not a checkpoint: the prefix is read again
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	c, ok := parseCheckpoint(b)
	if err != nil || !ok || c.Version != 1 {
		return nil
	}
	n := c.Size - c.LastOffset // the last line and its newline
	if c.Lines < 1 || c.LastOffset < 0 || n < 2 || n > int64(j.opts.MaxLineBytes)+1 {
		return nil
	}
	buf := make([]byte, n)
	if _, err := j.f.ReadAt(buf, c.LastOffset); err != nil {
		return nil
	}
	line := buf[:n-1]
	sum := sha256.Sum256(line)
	if buf[n-1] != '\n' || bytes.IndexByte(line, '\n') >= 0 || hex.EncodeToString(sum[:]) != c.LastSHA256 {
		return nil
	}
	l := linereader.Line{Number: c.Lines, Offset: c.LastOffset, Size: n, Bytes: line}
	if _, be := checkLine(j.path, l, c.Lines); be != nil {
		return nil
	}
	j.cur.off, j.cur.pos, j.cur.lastOff = c.Size, c.Lines, c.LastOffset
	j.cur.last = append(j.cur.last[:0], line...)
	j.unsaved = 0
	return nil
}

// saveCheckpoint records the verified prefix, under the lock, through a
// temporary file renamed into place. A symlink at the checkpoint path is
// left alone and the checkpoint is not written; failures only mean the
// next fresh writer reads more.
func (j *Journal) saveCheckpoint() {
	if j.cur.pos == 0 {
		return
	}
	if fi, err := os.Lstat(j.ckpt); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return
	}
	sum := sha256.Sum256(j.cur.last)
	b := checkpoint{Version: 1, Size: j.cur.off, Lines: j.cur.pos, LastOffset: j.cur.lastOff, LastSHA256: hex.EncodeToString(sum[:])}.appendJSON(nil)
	// One temporary name: checkpoints are saved only under the lock, so
	// no other saver is using it, and one killed while saving leaves a
	// file the next save simply overwrites.
	tmp := j.ckpt + ".tmp"
	f, err := openFile(tmp, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return
	}
	// A file someone else planted at the temporary name is neither
	// written nor renamed into place.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || checkSafe(tmp, "checkpoint", fi, true) != nil || f.Truncate(0) != nil {
		f.Close()
		return
	}
	_, werr := f.Write(append(b, '\n'))
	if errors.Join(werr, f.Close()) != nil || os.Rename(tmp, j.ckpt) != nil {
		os.Remove(tmp)
		return
	}
	j.unsaved = 0
}

// sweepCheckpointTemps removes the temporary checkpoints (.tmp-<hex>)
// that writers before the fixed temporary name left when they were killed
// while saving one (Repair calls it, under the lock).
func (j *Journal) sweepCheckpointTemps() {
	dir, prefix := filepath.Dir(j.ckpt), filepath.Base(j.ckpt)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
