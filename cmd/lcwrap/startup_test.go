package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// Every lcwrap process runs every linked package's initialisation before
// its first line of work, and on a machine where a page fault is dear
// each package with one costs a fault or more (bench/RESULTS.md, "Twins
// and the floor"). None of lcwrap's own packages has one: a table is a
// switch or a lazy.Value, a flag definition is data.
func TestNoPackageInitialisation(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(t.TempDir(), "lcwrap")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(goTool, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	init := regexp.MustCompile(`^(main|github\.com/lcwrap/lcwrap/[^ ]*)\.(map\.)?init(\.[0-9]+)?$`)
	var found []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == "T" && init.MatchString(f[2]) {
			found = append(found, f[2])
		}
	}
	if len(found) > 0 {
		t.Fatalf("package initialisation in lcwrap's own packages (make the variable a function, a switch or a lazy.Value):\n%s", strings.Join(found, "\n"))
	}
}
