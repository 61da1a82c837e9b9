//go:build !linux

package event

import "os"

// readProcFile reads a small file.
func readProcFile(name string) ([]byte, error) { return os.ReadFile(name) }
