package testtool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

var (
	buildOnce sync.Once
	lcwrapBin string
	buildErr  error
)

// Lcwrap returns the path of an lcwrap binary built from this module, once
// per test process (with the go of the running toolchain), for tests that
// run it under another program (tmux, an agent's hooks). Call Cleanup from
// TestMain to remove it.
func Lcwrap(t TB) string {
	t.Helper()
	if p := os.Getenv(envBin); p != "" {
		return p // the parent process's (a test re-run by Offline)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lcwrap-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		lcwrapBin = filepath.Join(dir, "lcwrap")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if out, err := exec.Command(goTool, "build", "-o", lcwrapBin, "github.com/lcwrap/lcwrap/cmd/lcwrap").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building lcwrap: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("%v", buildErr)
	}
	return lcwrapBin
}

var (
	companionMu    sync.Mutex
	companionBuilt = map[string]error{}
)

// Companion returns the path of lcwrap's companion program name
// (lcwrap-top, lcwrap-serve: cmd/NAME) built beside Lcwrap's binary, where
// lcwrap looks for it first; once per name and test process.
func Companion(t TB, name string) string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(Lcwrap(t)), name)
	if _, err := os.Stat(bin); err == nil && os.Getenv(envBin) != "" {
		return bin // built by the parent process (a test re-run by Offline)
	}
	companionMu.Lock()
	defer companionMu.Unlock()
	err, done := companionBuilt[name]
	if !done {
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if out, berr := exec.Command(goTool, "build", "-o", bin, "github.com/lcwrap/lcwrap/cmd/"+name).CombinedOutput(); berr != nil {
			err = fmt.Errorf("building %s: %v\n%s", name, berr, out)
		}
		companionBuilt[name] = err
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	return bin
}

// envBin hands the binary Lcwrap built to a test re-run by Offline.
const envBin = "LCWRAP_TEST_BIN"

// Cleanup removes the binary Lcwrap built, if any.
func Cleanup() {
	if lcwrapBin != "" {
		os.RemoveAll(filepath.Dir(lcwrapBin))
	}
}
