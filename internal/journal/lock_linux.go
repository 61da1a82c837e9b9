package journal

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace moves from to to atomically, failing with EEXIST when to
// exists: the same exclusion as mkdir, but the directory arrives with its
// owner record already inside.
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}

// exchange swaps a and b atomically; both must exist.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// datasync flushes f's data and size (fdatasync(2)).
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
