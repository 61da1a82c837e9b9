//go:build unix

package fleet

import (
	"os"
	"syscall"
)

func keyOf(st os.FileInfo) fileKey {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(s.Dev), ino: uint64(s.Ino)}
	}
	return fileKey{}
}
