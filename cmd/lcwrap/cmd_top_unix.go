//go:build unix

package main

import (
	"os"
	"syscall"
)

// execTop replaces lcwrap with lcwrap-top: the terminal, the signals and
// the exit status are then top's own.
func execTop(bin string, argv []string, _ stdio) error {
	if err := syscall.Exec(bin, argv, os.Environ()); err != nil {
		return exitCode(1, "cannot run %s: %v", bin, err)
	}
	return nil
}
