package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dirWatch is an inotify watch on a journal's directory: it tells a
// follower that the journal's files may have changed (appended to,
// created, sealed under their second name, replaced, removed), so that a
// quiet journal costs no wake-up at all. Events about other files of the
// directory are read and dropped.
type dirWatch struct {
	f      *os.File // the inotify descriptor, non-blocking, in the runtime's poller
	rc     syscall.RawConn
	base   string                 // the journal's file name
	match  func(name string) bool // instead of base: the files that concern the watcher
	buf    []byte
	broken bool // the directory went away (or the watch failed): set up a new one
	said   bool // the last read found a change that concerns the watcher
	stop   func() bool
}

// watchMask is what a journal's directory is watched for.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// watchDir watches the directory of the journal at path until ctx is done
// or close; nil when no watch can be set up (no inotify, too many
// watches, no directory yet).
func watchDir(ctx context.Context, path string) *dirWatch {
	return watchDirWith(ctx, filepath.Dir(path), filepath.Base(path), nil)
}

// watchDirWith watches dir for the journal named base, or (match not nil)
// for the files match accepts.
func watchDirWith(ctx context.Context, dir, base string, match func(string) bool) *dirWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	if _, err := unix.InotifyAddWatch(fd, dir, watchMask); err != nil {
		unix.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "inotify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	w := &dirWatch{f: f, rc: rc, base: base, match: match, buf: make([]byte, 4096)}
	// A done ctx ends a wait at once.
	w.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	return w
}

func (w *dirWatch) close() {
	w.stop()
	w.f.Close()
}

// drain drops the events queued so far: the look that follows sees what
// they announced.
func (w *dirWatch) drain() {
	w.f.SetReadDeadline(time.Time{}) // a past one would refuse to read
	w.read(false)
}

// wait returns once the journal's files may have changed, or after d, or
// when ctx is done.
func (w *dirWatch) wait(ctx context.Context, d time.Duration) {
	w.f.SetReadDeadline(time.Now().Add(d))
	if ctx.Err() != nil {
		return
	}
	w.read(true)
}

// read reads the queued events; with block it waits (until the read
// deadline) for one that concerns the journal.
func (w *dirWatch) read(block bool) {
	hit := false
	err := w.rc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Read(int(fd), w.buf)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return hit || !block
			case err != nil || n <= 0:
				w.broken = true
				return true
			}
			if w.concerns(w.buf[:n]) {
				hit = true
			}
		}
	})
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		w.broken = true
	}
	w.said = hit
}

// concerns reports whether a batch of events may concern the journal:
// its live file or a sealed one, the directory itself going away, or
// events lost to an overflow.
func (w *dirWatch) concerns(b []byte) bool {
	hit := false
	for len(b) >= unix.SizeofInotifyEvent {
		mask := binary.NativeEndian.Uint32(b[4:8])
		n := int(binary.NativeEndian.Uint32(b[12:16]))
		if unix.SizeofInotifyEvent+n > len(b) {
			break
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+n]), "\x00")
		b = b[unix.SizeofInotifyEvent+n:]
		switch {
		case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
			w.broken, hit = true, true
		case mask&unix.IN_Q_OVERFLOW != 0:
			hit = true
		case w.match != nil:
			hit = hit || name != "" && w.match(name)
		case name == w.base || strings.HasPrefix(name, w.base+sealedPrefix):
			hit = true
		}
	}
	return hit
}
