package testtool

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// Chromium runs Debian's chromium headless on the local file with flags
// (--dump-dom, --screenshot=PATH, a --window-size other than 1280×900)
// and returns what it printed; a missing chromium skips the test (fails
// it under CI), and a chromium that fails fails the test (one killed by
// a signal of its own is run again, twice at most). It never opens
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
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err == nil {
			return out.Bytes()
		}
		// Debian's headless chromium now and then dies of a signal of
		// its own (SIGSEGV, seen on a loaded machine) before it reads
		// the page: the browser's crash, not the page's; try it again,
		// twice at most, and say so.
		var exit *exec.ExitError
		if errors.As(err, &exit) && !exit.Exited() && ctx.Err() == nil && attempt < 3 {
			t.Logf("chromium %v crashed (%v), attempt %d: running it again", flags, err, attempt)
			continue
		}
		t.Fatalf("chromium %v: %v\n%s", flags, err, errb.String())
	}
}
