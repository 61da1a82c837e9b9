package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Help is the sentence a command's --help says about its output file.
const Help = "an existing device or FIFO is written through (as > would), never replaced; a symlink, directory or socket is refused"

// WriteFile writes b to path (see the package comment). perm applies to a
// file it creates or replaces.
func WriteFile(path string, b []byte, perm fs.FileMode) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replace(path, b, perm)
	case err != nil:
		return err
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return replace(path, b, perm)
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: refusing to follow it; name its target instead", path)
	case m.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s is a socket: refusing to write to it", path)
	default: // device, FIFO
		return writeThrough(path, b)
	}
}

// writeThrough opens an existing non-regular file and writes b to it, as
// > would; O_NOFOLLOW refuses a symlink swapped in since the Lstat, and no
// O_CREAT means nothing new is made.
func writeThrough(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// replace writes b through a temporary file in the same directory and
// renames it over path.
func replace(path string, b []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+strings.TrimPrefix(filepath.Base(path), ".")+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
