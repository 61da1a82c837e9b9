package testtool

import (
	"fmt"
	"os"
	"os/exec"
)

// CI reports whether the tests run under CI (CI=true), where a missing
// tool is a failure, never a skip.
func CI() bool { return os.Getenv("CI") == "true" }

// TB is the part of testing.TB that Need uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Need returns the path of name on PATH. When there is none it skips the
// test (or, under CI, fails it) with a message saying what to install.
func Need(t TB, name, install string) string {
	t.Helper()
	path, err := Look(name, install)
	if err != nil {
		if CI() {
			t.Fatalf("%v", err)
			return ""
		}
		t.Skipf("%v", err)
	}
	return path
}

// Look returns the path of name on PATH, or an error saying that it is
// missing and how to install it (and, under CI, that .ci/run must).
func Look(name, install string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil {
		return path, nil
	}
	if CI() {
		return "", fmt.Errorf("%s is not installed (%s); under CI=true that is a failure: .ci/run must install it", name, install)
	}
	return "", fmt.Errorf("%s is not installed (%s): skipped", name, install)
}
