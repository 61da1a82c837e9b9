package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// report --html onto a device node writes through it and leaves it a device
// (issue 23 item 0); onto a symlink it refuses and changes nothing.
func TestReportHTMLKeepsDeviceNode(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "j.jsonl")
	lcwrapRun(t, j, "--child-id", "r1", "--", "true")
	dev := "/dev/null"
	if os.Geteuid() == 0 {
		dev = filepath.Join(dir, "null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := lcwrapExit(t, j, "", "report", "--html", dev)
	if code != 0 {
		t.Fatalf("report --html %s: exit %d: %s", dev, code, stderr)
	}
	fi, err := os.Lstat(dev)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", dev, fi.Mode(), err)
	}

	target := filepath.Join(dir, "target.html")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link.html")
	os.Symlink(target, link)
	_, stderr, code = lcwrapExit(t, j, "", "report", "--html", link)
	if code == 0 || !strings.Contains(stderr, "symbolic link") {
		t.Fatalf("report --html symlink: exit %d, stderr %q; want refused", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("target changed: %q", b)
	}
}
