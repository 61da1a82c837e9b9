package outpath

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestWriteFileRegularAndMissing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.html")
	for _, want := range []string{"first", "second"} {
		if err := WriteFile(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

// A FIFO is written through, and stays a FIFO.
func TestWriteFileFIFOWrittenThrough(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if err := WriteFile(p, []byte("<html>report</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != "<html>report</html>" {
			t.Fatalf("reader got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reader got nothing")
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("FIFO replaced: %v, %v", fi.Mode(), err)
	}
}

// /dev/null (and, as root, a device node made in a temp dir) stays a
// character device that reads back empty.
func TestWriteFileDeviceWrittenThrough(t *testing.T) {
	paths := []string{"/dev/null"}
	if os.Geteuid() == 0 {
		p := filepath.Join(t.TempDir(), "null")
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Skipf("%s is not a character device here: %v", p, err)
		}
		if err := WriteFile(p, []byte("report"), 0o644); err != nil {
			// As non-root, the write through /dev/null still works.
			t.Fatalf("%s: %v", p, err)
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s replaced: mode %v, %v", p, fi.Mode(), err)
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) != 0 {
			t.Fatalf("%s reads back %q, %v", p, b, err)
		}
	}
}

func TestWriteFileRefusesSymlinkDirSocket(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, dir, sock} {
		before, _ := os.Lstat(p)
		if err := WriteFile(p, []byte("x"), 0o644); err == nil {
			t.Errorf("%s: written, want refused", p)
		}
		after, err := os.Lstat(p)
		if err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v -> %v (%v)", p, before.Mode(), after, err)
		}
	}
	if b, _ := os.ReadFile(target); !bytes.Equal(b, []byte("keep")) {
		t.Fatalf("symlink target changed: %q", b)
	}
}
