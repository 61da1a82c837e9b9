//go:build !linux

package claudecode

// fileWatch is not available here: the caller polls.
type fileWatch struct{}

func watchFile(string) *fileWatch { return nil }

func (*fileWatch) close() {}

func (*fileWatch) wait(<-chan struct{}) bool { return true }

func watchDirs(string, ...string) *fileWatch { return nil }

func (*fileWatch) add(...string) {}
