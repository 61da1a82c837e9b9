package journal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RepairReport says what Repair quarantined.
type RepairReport struct {
	Path    string
	Blocked *BlockedError // the first bad line; nil when the journal was clean
	// Quarantine is the file holding a copy of the range for people; ""
	// when nothing was quarantined or the copy could not be made (the
	// range itself stays in the journal either way).
	Quarantine string
	// Range is the byte range of the live file that every lcwrap reader
	// now skips, as the record appended after it says.
	Range            *Quarantined
	KeptLines        int64 // journalSequence of the last line before the range
	KeptBytes        int64 // bytes before the range
	QuarantinedLines int64 // lines in the range (a terminated torn line counts as one)
	QuarantinedBytes int64 // bytes in the range, the newline lcwrap added included
	NextSequence     int64 // the journalSequence the next append gets
	// ForeignWriters is true when a writer without the kernel lock was seen
	// on this journal: a reference writer still stops at the range.
	ForeignWriters bool
}

// Repair makes an append-blocked journal appendable again without moving
// or changing a byte. Under the lock it reads the whole live file (the
// checkpoint is not trusted), and when a bad line no record covers is
// found it quarantines everything from that line to the end in place: a
// final line without newline gets one, a copy of the range goes to a new
// file <journal>.quarantine-<UTC time> (0600, synced, compared byte for
// byte), and a control record appended after the range names its exact
// bytes and lines, so that every lcwrap reader skips it. A clean journal is
// left as it is.
//
// Outcomes: a RepairReport and nil; an error wrapping fs.ErrNotExist when
// there is no journal; the lock, symlink and not-regular errors of Append;
// an I/O error, in which case nothing was appended.
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
	if cerr := j.checkFile(false); cerr != nil {
		return rep, cerr
	}
	j.sweepCheckpointTemps()
	rep.ForeignWriters = j.foreignSeen()
	rep.KeptLines, rep.KeptBytes = j.cur.pos, j.cur.off
	if err == nil {
		j.saveCheckpoint()
		rep.NextSequence = j.cur.pos + 1
		return rep, nil
	}
	if !errors.As(err, &be) {
		return rep, err
	}
	rep.Blocked = be
	q, err := j.quarantineRange(be, "repair")
	if err != nil {
		return rep, err
	}
	rep.Range, rep.QuarantinedLines, rep.QuarantinedBytes = q, q.Lines, q.To-q.From
	if q.Copy != "" {
		rep.Quarantine = filepath.Join(filepath.Dir(j.path), q.Copy)
	}
	rep.NextSequence = j.cur.pos + 1
	j.saveCheckpoint()
	return rep, nil
}

// tornEnd terminates a final line without newline. A bare newline could
// turn a line that lacked only its newline into a valid line, which
// readers would take for an event before reaching the record; a JSON
// object never ends in '#', so the terminated line is malformed for
// every reader.
const tornEnd = "#\n"

// quarantineRange quarantines [be.Offset, end of file) in place, under the
// lock: it terminates a final line without newline (tornEnd), copies the range to a
// quarantine file (best effort: a failed copy is removed and the record
// says there is none) and appends the record naming the range, newline
// and record in one write, then syncs.
func (j *Journal) quarantineRange(be *BlockedError, by string) (*Quarantined, error) {
	size, err := fileSize(j.f)
	if err != nil {
		return nil, err
	}
	if be.Offset != j.cur.off || size <= be.Offset {
		return nil, fmt.Errorf("journal %s: the bad range moved while the lock was held (%d..%d, verified to %d)", j.path, be.Offset, size, j.cur.off)
	}
	var prefix []byte
	last := make([]byte, 1)
	if _, err := j.f.ReadAt(last, size-1); err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	if last[0] != '\n' {
		prefix = []byte(tornEnd)
	}
	end := size + int64(len(prefix))
	rng := io.NewSectionReader(j.f, be.Offset, size-be.Offset)
	lines, err := countLines(rng)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	if len(prefix) > 0 {
		lines++ // the terminated line
	}
	q := &Quarantined{
		From: be.Offset, To: end, Lines: lines, FirstSequence: be.Line,
		Class: string(be.Class), Reason: be.Reason, By: by, Terminated: len(prefix) > 0,
	}
	if name, err := copyRange(j.path, rng, prefix); err == nil {
		q.Copy = filepath.Base(name)
	}
	var d controlDetails
	d.Journal.Quarantined = q
	var buf bytes.Buffer
	buf.Write(prefix)
	lastStart, err := j.encode(&buf, [][]byte{controlLine(d)}, be.Line+lines)
	if err != nil {
		return nil, err
	}
	// The record follows the range; write moves the verified prefix past
	// both (the range's lines keep their positions and carry no event).
	j.cur.off, j.cur.pos = size, be.Line+lines-1
	if err := j.write(buf.Bytes(), lastStart, 1); err != nil {
		j.reset() // read it again: the write may have gone in part
		return nil, err
	}
	if err := j.f.Sync(); err != nil {
		return nil, fmt.Errorf("journal %s: fsync: %w", j.path, err)
	}
	return q, nil
}

// countLines counts the newlines of r.
func countLines(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// copyRange copies rng (and the terminating newline lcwrap adds, when
// any) into a new quarantine file beside the journal, makes it durable and
// compares it with rng byte for byte. On any failure the file is removed
// (no empty or partial copy is left behind, e.g. on a full disk).
func copyRange(path string, rng *io.SectionReader, suffix []byte) (string, error) {
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
			return "", fmt.Errorf("quarantine file: %w", err)
		}
	}
	_, err := io.Copy(f, io.NewSectionReader(rng, 0, rng.Size()))
	if err == nil && len(suffix) > 0 {
		_, err = f.Write(suffix)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = sameBytes(f, rng)
	}
	f.Close()
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("quarantine file %s: %w", name, err)
	}
	syncDir(filepath.Dir(path))
	return name, nil
}

// sameBytes compares f from its start with rng.
func sameBytes(f *os.File, rng *io.SectionReader) error {
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for off := int64(0); off < rng.Size(); {
		k := min(int64(len(a)), rng.Size()-off)
		if _, err := f.ReadAt(a[:k], off); err != nil {
			return err
		}
		if _, err := rng.ReadAt(b[:k], off); err != nil {
			return err
		}
		if !bytes.Equal(a[:k], b[:k]) {
			return fmt.Errorf("the copy differs from the journal at byte %d of the range", off)
		}
		off += k
	}
	return nil
}

// rotate seals the live file and starts the next, under the lock: the
// live file gets a second name <journal>.sealed-<its first
// journalSequence> (a hard link: its inode, content and every reader's
// descriptor stay as they are), then a new file holding a segment-start
// record is renamed over the live path. A rotation that dies between the
// two steps leaves a sealed name that is still the live file; readers
// ignore it and the next rotation goes on from there.
func (j *Journal) rotate() error {
	j.sweepRotating()
	first := peekBase(j.f) + 1
	sealedPath := sealedName(j.path, first)
	if err := os.Link(j.path, sealedPath); err != nil {
		sfi, serr := os.Lstat(sealedPath)
		lfi, lerr := j.f.Stat()
		if errors.Is(err, fs.ErrExist) && serr == nil && lerr == nil && !os.SameFile(sfi, lfi) {
			// Something else has the name: never followed nor replaced.
			if ue := checkSafe(sealedPath, "next sealed file", sfi, true); ue != nil {
				return fmt.Errorf("journal %s: cannot rotate: %w", j.path, ue)
			}
			return fmt.Errorf("journal %s: cannot rotate: %s, the name its sealed file takes, already holds another file; lcwrap neither follows nor replaces it: move it away (%s)", j.path, sealedPath, SharedDirsDoc)
		}
		if !errors.Is(err, fs.ErrExist) || serr != nil || lerr != nil {
			return fmt.Errorf("journal %s: sealing it as %s: %w", j.path, sealedPath, err)
		}
	}
	var raw [8]byte
	random(raw[:])
	tmp := j.path + ".rotating-" + hex.EncodeToString(raw[:])
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("journal %s: starting the next file: %w", j.path, err)
	}
	if j.group >= 0 {
		if fi, err := f.Stat(); err == nil {
			shareFile(f, fi, j.group)
		}
	}
	var d controlDetails
	d.Journal.Segment = &SegmentStart{Sealed: filepath.Base(sealedPath), FirstSequence: j.cur.pos + 1}
	var buf bytes.Buffer
	if _, err := j.encode(&buf, [][]byte{controlLine(d)}, j.cur.pos+1); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal %s: starting the next file: %w", j.path, err)
	}
	if err := os.Rename(tmp, j.path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal %s: starting the next file: %w", j.path, err)
	}
	syncDir(filepath.Dir(j.path))
	j.f.Close()
	j.f = f
	pos := j.cur.pos
	j.reset()
	j.cur.basePos, j.cur.pos = pos, pos
	b := buf.Bytes()
	j.cur.off, j.cur.pos, j.cur.lastOff = int64(len(b)), pos+1, 0
	j.cur.last = append(j.cur.last[:0], b[:len(b)-1]...)
	return nil
}

// sweepRotating removes new files of rotations that died before renaming
// them into place (only a lock holder rotates, and we hold the lock).
func (j *Journal) sweepRotating() {
	dir, prefix := filepath.Dir(j.path), filepath.Base(j.path)+".rotating-"
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
