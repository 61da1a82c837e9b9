package testtool

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"
)

// Chromium runs Debian's chromium headless on the local file with flags
// (--dump-dom, --screenshot=PATH, a --window-size other than 1280×900)
// and returns what it printed; a missing chromium skips the test (fails
// it under CI), and a chromium that fails fails the test. It never opens
// anything but file.
func Chromium(t *testing.T, file string, flags ...string) []byte {
	t.Helper()
	bin := Need(t, "chromium", "apt-get install chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--window-size=1280,900"}, flags...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", flags, err, errb.String())
	}
	return out.Bytes()
}
