package testtool

import (
	"bytes"
	"sync"
)

// Buffer is a stream a test lets lcwrap write to from several goroutines
// and reads back. With Err set, every Write fails with it (a closed
// pipe, say).
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	Err error
}

// Write appends p, or fails with Err.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Err != nil {
		return 0, b.Err
	}
	return b.buf.Write(p)
}

// String returns what was written.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
