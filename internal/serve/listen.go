package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/outpath"
)

// DefaultListen is --listen's default: loopback only.
const DefaultListen = "127.0.0.1:7468"

// TokenFileName is the token file's name in the state directory.
const TokenFileName = "serve.token"

// DefaultTokenFile is the token file in the state directory: the
// directory of the default journal ($XDG_STATE_HOME/lcwrap, else
// ~/.local/state/lcwrap; $LCWRAP_JOURNAL moves the journal, not it).
func DefaultTokenFile() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "lcwrap", TokenFileName), nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no state directory for the token file: set XDG_STATE_HOME or HOME, or give --token-file: %w", err)
		}
	}
	return filepath.Join(home, ".local", "state", "lcwrap", TokenFileName), nil
}

// Token reads the token file at path, or creates it (mode 0600, a random
// token of 32 bytes in hex, its directory 0700 when missing) through
// internal/outpath when there is none. It refuses a token file that is a
// symlink or not a regular file, one others may read or write (chmod 600
// it), and an empty one. created says it was made now.
func Token(path string) (token string, created bool, err error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", false, err
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", false, err
		}
		tok := hex.EncodeToString(b)
		if err := outpath.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
			return "", false, fmt.Errorf("token file %s: %w", path, err)
		}
		return tok, true, nil
	case err != nil:
		return "", false, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", false, fmt.Errorf("token file %s is a symbolic link: refusing to follow it; name its target instead", path)
	case !fi.Mode().IsRegular():
		return "", false, fmt.Errorf("token file %s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return "", false, fmt.Errorf("token file %s has mode %04o: others may read it; run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", false, fmt.Errorf("token file %s holds no token (one line, no spaces)", path)
	}
	return tok, false, nil
}

// IsUnix says whether --listen names a unix socket (a path).
func IsUnix(addr string) bool { return strings.Contains(addr, "/") }

// Listen listens at addr: a unix socket when it is a path (mode 0600; a
// stale socket nobody answers on is removed, anything else there is
// refused), else TCP. loopback reports whether only this host can reach
// it (a unix socket, or a loopback address).
func Listen(addr string) (l net.Listener, loopback bool, err error) {
	if IsUnix(addr) {
		if fi, err := os.Lstat(addr); err == nil {
			if fi.Mode()&fs.ModeSocket == 0 {
				return nil, false, fmt.Errorf("%s exists and is not a socket: refusing to replace it", addr)
			}
			if c, err := net.DialTimeout("unix", addr, time.Second); err == nil {
				c.Close()
				return nil, false, fmt.Errorf("%s: a server already answers there", addr)
			}
			os.Remove(addr)
		}
		l, err := net.Listen("unix", addr)
		if err != nil {
			return nil, false, err
		}
		if err := os.Chmod(addr, 0o600); err != nil {
			l.Close()
			return nil, false, err
		}
		return l, true, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, fmt.Errorf("--listen %q: give HOST:PORT or a socket path: %v", addr, err)
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, false, err
	}
	ip := l.Addr().(*net.TCPAddr).IP
	return l, host != "" && ip.IsLoopback(), nil
}
