package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// lcwrap links no HTTP server: net/http (and internal/serve) belong to
// lcwrap-serve, so a plain run never pays for them (docs/design.md).
func TestNoHTTPServerLinked(t *testing.T) {
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", "-tags", "urfave_cli_no_template", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net/http" || p == "github.com/lcwrap/lcwrap/internal/serve" || p == "crypto/tls" {
			t.Errorf("lcwrap links %s", p)
		}
	}
}

// Without lcwrap-serve beside lcwrap or in $PATH, serve names the build step.
func TestServeNotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errb testtool.Buffer
	code := runWith(context.Background(), []string{"lcwrap", "serve", "--journal", filepath.Join(t.TempDir(), "j")}, stdio{out: &out, err: &errb})
	if code != 1 || !strings.Contains(errb.String(), "make build") || !strings.Contains(errb.String(), "lcwrap-serve") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	code = runWith(context.Background(), []string{"lcwrap", "serve", "--tls-key", "k"}, stdio{out: &out, err: &errb})
	if code != 125 {
		t.Fatalf("--tls-key alone: exit %d", code)
	}
}
