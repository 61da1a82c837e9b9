package serve_test

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/serve"
)

// The token file: made when missing (mode 0600, its directory 0700, a
// random token), read when there; refused when others may read it, when
// it is a symlink or not a regular file, or empty.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state", "lcwrap", serve.TokenFileName)
	tok, created, err := serve.Token(p)
	if err != nil || !created || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) {
		t.Fatalf("%q %v %v", tok, created, err)
	}
	fi, _ := os.Stat(p)
	di, _ := os.Stat(filepath.Dir(p))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode(), di.Mode())
	}
	again, created, err := serve.Token(p)
	if err != nil || created || again != tok {
		t.Fatalf("read again: %q %v %v", again, created, err)
	}
	other, _, _ := serve.Token(filepath.Join(dir, "other.token"))
	if other == tok {
		t.Fatal("two token files, one token")
	}
	os.Chmod(p, 0o644)
	if _, _, err := serve.Token(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("mode 0644: %v", err)
	}
	link := filepath.Join(dir, "link.token")
	os.Symlink(p, link)
	if _, _, err := serve.Token(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlink: %v", err)
	}
	if _, _, err := serve.Token(dir); err == nil {
		t.Error("a directory was taken")
	}
	empty := filepath.Join(dir, "empty.token")
	os.WriteFile(empty, nil, 0o600)
	if _, _, err := serve.Token(empty); err == nil {
		t.Error("an empty token file was taken")
	}
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv("LCWRAP_JOURNAL", filepath.Join(dir, "elsewhere", "j.jsonl"))
	if d, err := serve.DefaultTokenFile(); err != nil || d != filepath.Join(dir, "lcwrap", serve.TokenFileName) {
		t.Errorf("default token file %s %v", d, err)
	}
}

// Loopback only unless told otherwise: the default address is loopback,
// a unix socket is this host's (mode 0600), and an address of every
// interface is not loopback. Hosts are the listening address's names.
func TestListen(t *testing.T) {
	host, _, _ := net.SplitHostPort(serve.DefaultListen)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("the default %s is not loopback", serve.DefaultListen)
	}
	l, loop, err := serve.Listen("127.0.0.1:0")
	if err != nil || !loop {
		t.Fatal(err, loop)
	}
	hosts := serve.Hosts(l.Addr(), []string{"box.example:80"})
	l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, want := range []string{"box.example:80", "localhost:" + itoa(port), "127.0.0.1:" + itoa(port), "[::1]:" + itoa(port)} {
		if !contains(hosts, want) {
			t.Errorf("hosts %v lack %s", hosts, want)
		}
	}
	l, loop, err = serve.Listen("0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if loop {
		t.Error("0.0.0.0 taken as loopback")
	}
	if h := serve.Hosts(l.Addr(), nil); len(h) != 0 {
		t.Errorf("0.0.0.0 answers to %v by itself", h)
	}
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, loop, err = serve.Listen(sock)
	if err != nil || !loop {
		t.Fatal(err, loop)
	}
	fi, _ := os.Stat(sock)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v", fi.Mode())
	}
	if _, _, err := serve.Listen(sock); err == nil {
		t.Error("a second server on a live socket")
	}
	l.Close()
	plain := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(plain, []byte("x"), 0o600)
	if _, _, err := serve.Listen(plain); err == nil {
		t.Error("a regular file replaced by a socket")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
