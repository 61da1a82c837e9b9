//go:build !linux

package journal

import (
	"errors"
	"os"
)

// renameNoReplace is unavailable here: the lock falls back to mkdir.
func renameNoReplace(from, to string) error { return errors.ErrUnsupported }

// exchange is unavailable here: a reclaim renames aside.
func exchange(a, b string) error { return errors.ErrUnsupported }

// datasync is fsync here.
func datasync(f *os.File) error { return f.Sync() }
