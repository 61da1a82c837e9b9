//go:build !linux

package stream

import (
	"io"
	"os"
)

func growPipe(w *os.File) {}

// teeFD is -1: tee(2) is Linux's.
func teeFD(out io.Writer) int { return -1 }

func teeRead(src *os.File, out int, buf []byte, gate func(tee func()) bool) (n int, outErr, err error) {
	return 0, nil, errTeeUnsupported
}
