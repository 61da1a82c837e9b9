//go:build !unix

package main

import (
	"errors"
	"os/exec"
)

// execTop runs lcwrap-top as a child where exec(2) does not exist and
// passes its exit status on.
func execTop(bin string, argv []string, std stdio) error {
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = std.in, std.out, std.err
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return exitCode(ee.ExitCode(), "")
	}
	if err != nil {
		return exitCode(1, "cannot run %s: %v", bin, err)
	}
	return nil
}
