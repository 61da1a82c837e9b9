package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// binaries returns the directory of lcwrap with lcwrap-serve built beside it,
// where `lcwrap serve` looks first.
func binaries(t *testing.T) string {
	t.Helper()
	return filepath.Dir(testtool.Companion(t, "lcwrap-serve"))
}

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

// server is `lcwrap serve ARGS` running, with what it said on stderr.
type server struct {
	cmd    *exec.Cmd
	stderr *testtool.Buffer
	url    string
}

var serving = regexp.MustCompile(`on (https?://[^ ]+/) `)

// serveCmd starts `lcwrap serve args...` with a state directory of its own
// and waits for its "serving" line.
func serveCmd(t *testing.T, state string, args ...string) *server {
	t.Helper()
	dir := binaries(t)
	cmd := exec.Command(filepath.Join(dir, "lcwrap"), append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "PATH=/usr/bin:/bin")
	s := &server{cmd: cmd, stderr: &testtool.Buffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := serving.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serving line: %s", s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns the exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	err := s.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func get(t *testing.T, c *http.Client, url, host, tok string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// lcwrap serve runs lcwrap-serve: loopback by default, the token file made
// under the state directory with mode 0600, the API answering with it,
// SIGTERM ending it with 0.
func TestServe(t *testing.T) {
	state := t.TempDir()
	j := filepath.Join(t.TempDir(), "j.jsonl")
	s := serveCmd(t, state, "--journal", j, "--listen", "127.0.0.1:0")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || strings.Contains(s.stderr.String(), "clear text") {
		t.Fatalf("%s", s.stderr.String())
	}
	tf := filepath.Join(state, "lcwrap", "serve.token")
	fi, err := os.Stat(tf)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	tok, _ := os.ReadFile(tf)
	if strings.Contains(s.stderr.String(), strings.TrimSpace(string(tok))) {
		t.Fatal("the token was printed")
	}
	if code, b := get(t, http.DefaultClient, s.url+"v1/children", "", strings.TrimSpace(string(tok))); code != 200 || !strings.Contains(b, `"evidence":false`) {
		t.Fatalf("%d %s", code, b)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr.String())
	}
}

// Another address than loopback: named hosts are required for an address
// of every interface, and without TLS it warns that the token travels in
// clear text; with --tls-cert/--tls-key it serves TLS and does not.
func TestOtherAddress(t *testing.T) {
	dir := binaries(t)
	out, err := exec.Command(filepath.Join(dir, "lcwrap"), "serve", "--listen", "0.0.0.0:0").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || !strings.Contains(string(out), "--allow-host") {
		t.Fatalf("0.0.0.0 without --allow-host: %v %s", err, out)
	}
	state := t.TempDir()
	s := serveCmd(t, state, "--journal", filepath.Join(t.TempDir(), "j"), "--listen", "0.0.0.0:0", "--allow-host", "box.example:7468")
	if !strings.Contains(s.stderr.String(), "the token travels in clear text") {
		t.Fatalf("no warning: %s", s.stderr.String())
	}
	tok, _ := os.ReadFile(filepath.Join(state, "lcwrap", "serve.token"))
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/"))
	url := "http://127.0.0.1:" + port + "/v1/children"
	if code, b := get(t, http.DefaultClient, url, "box.example:7468", strings.TrimSpace(string(tok))); code != 200 {
		t.Fatalf("Host box.example:7468: %d %s", code, b)
	}
	if code, _ := get(t, http.DefaultClient, url, "127.0.0.1:"+port, strings.TrimSpace(string(tok))); code != http.StatusMisdirectedRequest {
		t.Fatalf("a Host not named: %d", code)
	}
	s.stop(t)

	cert, key := selfSigned(t)
	s = serveCmd(t, state, "--journal", filepath.Join(t.TempDir(), "j"), "--listen", "0.0.0.0:0", "--allow-host", "box.example:7468", "--tls-cert", cert, "--tls-key", key)
	if strings.Contains(s.stderr.String(), "clear text") || !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("TLS: %s", s.stderr.String())
	}
	_, port, _ = net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(s.url, "https://"), "/"))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if code, b := get(t, c, "https://127.0.0.1:"+port+"/v1/children", "box.example:7468", strings.TrimSpace(string(tok))); code != 200 {
		t.Fatalf("TLS: %d %s", code, b)
	}
	s.stop(t)
	out, err = exec.Command(filepath.Join(dir, "lcwrap"), "serve", "--tls-cert", cert).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 {
		t.Fatalf("--tls-cert alone: %v %s", err, out)
	}
}

// A unix socket: mode 0600, removed at the end.
func TestUnixSocket(t *testing.T) {
	state := t.TempDir()
	sock := filepath.Join(t.TempDir(), "lcwrap.sock")
	dir := binaries(t)
	cmd := exec.Command(filepath.Join(dir, "lcwrap"), "serve", "--journal", filepath.Join(t.TempDir(), "j"), "--listen", sock)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	stderr := &testtool.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "unix socket") {
		if time.Now().After(deadline) {
			t.Fatalf("%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	tok, _ := os.ReadFile(filepath.Join(state, "lcwrap", "serve.token"))
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /v1/children HTTP/1.1\r\nHost: anything\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", strings.TrimSpace(string(tok)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	c.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket is left: %v", err)
	}
}

func selfSigned(t *testing.T) (string, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "box.example"}, DNSNames: []string{"box.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}
