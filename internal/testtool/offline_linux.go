package testtool

import (
	"flag"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// envOffline marks a test binary re-run inside a network namespace of its
// own (Offline).
const envOffline = "LCWRAP_TEST_OFFLINE_NETNS"

// Offline runs the calling top-level test in a new user and network
// namespace whose only interface is loopback, so that nothing it starts
// can reach any address but 127.0.0.1: the proof that a real agent CLI,
// pointed at a mock on 127.0.0.1, contacted nothing else (its requests
// elsewhere fail). It returns true in the namespace (the test goes on
// there); outside it returns false once the test has run in there (its
// output logged, its failure the caller's), and the caller returns. Call
// Lcwrap before it when the test needs lcwrap: the binary is built once,
// outside. Where
// no such namespace can be made the test is skipped (under CI it fails).
func Offline(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envOffline) == "1" {
		if err := loopbackUp(); err != nil {
			t.Fatalf("offline: loopback: %v", err)
		}
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1", "-test.v"}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		args = append(args, "-update") // doccapture's: captures rewritten from the run in the namespace
	}
	c := exec.Command(exe, args...)
	c.Env = append(os.Environ(), envOffline+"=1")
	if lcwrapBin != "" {
		c.Env = append(c.Env, envBin+"="+lcwrapBin)
	}
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := c.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") || err != nil && len(out) == 0 {
		msg := "no user and network namespace can be made here (" + err.Error() + "): cannot prove the run offline"
		if CI() {
			t.Fatalf("%s", msg)
		}
		t.Skip(msg)
	}
	t.Logf("in a network namespace with loopback only:\n%s", out)
	if err != nil {
		t.Fatalf("the test failed in its network namespace: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("skipped in its network namespace (see above)")
	}
	return false
}

// loopbackUp brings the namespace's lo up (a new network namespace has it
// down).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	ifr.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	return nil
}
