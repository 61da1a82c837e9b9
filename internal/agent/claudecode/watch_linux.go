package claudecode

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileWatch is an inotify watch on a file's directory: wait returns when
// that file may have changed (written, replaced, removed), so that a file
// that does not change costs no wake-up at all. Events about other files
// are read and dropped.
type fileWatch struct {
	f    *os.File // the inotify descriptor, non-blocking, in the runtime's poller
	rc   syscall.RawConn
	base string // the file watched ("": any file of the watched directories)
	buf  []byte
	// only, for some watched directories (by watch descriptor), are the
	// names that count there (a parent watched until they exist).
	only map[int32][]string
	fd   int
}

// watchDirs watches dirs for any change of their files, and parent for
// the creation of those of dirs that do not exist yet (call add again
// when they do); nil when no watch can be set up.
func watchDirs(parent string, dirs ...string) *fileWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "inotify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	w := &fileWatch{f: f, rc: rc, buf: make([]byte, 4096), only: map[int32][]string{}, fd: fd}
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	if wd, err := unix.InotifyAddWatch(fd, parent, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR); err == nil {
		w.only[int32(wd)] = names
	}
	w.add(dirs...)
	return w
}

// add watches the dirs that exist (a directory watched already is not
// watched twice).
func (w *fileWatch) add(dirs ...string) {
	for _, d := range dirs {
		unix.InotifyAddWatch(w.fd, d, fileWatchMask)
	}
}

const fileWatchMask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// watchFile watches path's directory; nil when no watch can be set up (no
// inotify, too many watches, no directory): the caller then polls.
func watchFile(path string) *fileWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), fileWatchMask); err != nil {
		unix.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "inotify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &fileWatch{f: f, rc: rc, base: filepath.Base(path), buf: make([]byte, 4096)}
}

func (w *fileWatch) close() { w.f.Close() }

// wait returns true once the file may have changed (or its directory went
// away, or events were lost), false when stop is closed first.
func (w *fileWatch) wait(stop <-chan struct{}) bool {
	// The deadline is cleared before the goroutine that sets it on stop
	// starts: cleared after, it would undo a stop that came first, and the
	// read would wait for the next change of the directory.
	w.f.SetReadDeadline(time.Time{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-stop:
			w.f.SetReadDeadline(time.Unix(1, 0))
		case <-done:
		}
	}()
	hit := false
	err := w.rc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Read(int(fd), w.buf)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return hit
			case err != nil || n <= 0:
				hit = true
				return true
			}
			if w.concerns(w.buf[:n]) {
				hit = true
			}
		}
	})
	select {
	case <-stop:
		return false
	default:
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		// The descriptor failed: say "changed", and let the caller's next
		// look (and its poll) decide.
		time.Sleep(registryPoll)
		return true
	}
	return hit
}

func (w *fileWatch) concerns(b []byte) bool {
	hit := false
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:4]))
		mask := binary.NativeEndian.Uint32(b[4:8])
		n := int(binary.NativeEndian.Uint32(b[12:16]))
		if unix.SizeofInotifyEvent+n > len(b) {
			break
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+n]), "\x00")
		b = b[unix.SizeofInotifyEvent+n:]
		if names, ok := w.only[wd]; ok {
			hit = hit || slices.Contains(names, name)
			continue
		}
		if mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT|unix.IN_Q_OVERFLOW) != 0 || name == w.base || w.base == "" {
			hit = true
		}
	}
	return hit
}
