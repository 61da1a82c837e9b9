package fleet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/lcwrap/lcwrap/internal/lazy"
)

// ErrNoOutput means PATH names no gateway output: no such file or
// directory, or a glob that matches no file.
var ErrNoOutput = errors.New("no gateway output")

// backupName matches the name the file exporter's rotation (timberjack)
// gives a file it has rotated away: <name>-<UTC time>-<reason>[_n]<ext>,
// e.g. gateway-2026-11-30T14-00-00.123-size.jsonl. The reason is
// optional: older releases (lumberjack) wrote <name>-<time><ext>.
// It is compiled at first use, not at start-up: every lcwrap process links
// this package (a hook call too), and few read a gateway's output.
var backupName = lazy.Value[*regexp.Regexp]{Make: func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+)-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3})(?:-([A-Za-z0-9]+)(?:_(\d+))?)?(\.[^.-]*)?$`)
}}

// fileKey identifies a file whatever its name: rotation renames the live
// file, and the reader goes on with it by this key.
type fileKey struct{ dev, ino uint64 }

// listed is a file of the output as listed now.
type listed struct {
	path, name string
	key        fileKey
	size       int64
	sealed     bool   // a rotated file: complete, never written again
	stamp      string // its rotation time, for sealed files
	uniq       int    // timberjack's _n when two rotations share a time
}

// less orders files as they were written: rotated files by rotation
// time, then the live files (each is newer than every file rotated from
// it), each group by name.
func (a *listed) less(b *listed) bool {
	switch {
	case a.sealed != b.sealed:
		return a.sealed
	case a.stamp != b.stamp:
		return a.stamp < b.stamp
	case a.uniq != b.uniq:
		return a.uniq < b.uniq
	}
	return a.name < b.name
}

// source is what PATH names: one file, every file of a directory, or the
// files a glob matches.
type source struct {
	path string
	kind int
}

const (
	kindFile = iota
	kindDir
	kindGlob
)

func newSource(path string) (*source, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: an empty path", ErrNoOutput)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return &source{path: path, kind: kindDir}, nil
	case err == nil && st.Mode().IsRegular():
		return &source{path: path, kind: kindFile}, nil
	case err == nil:
		return nil, fmt.Errorf("%s is neither a regular file nor a directory", path)
	case strings.ContainsAny(path, "*?["):
		if _, gerr := filepath.Match(path, ""); gerr != nil {
			return nil, fmt.Errorf("%s: bad glob: %v", path, gerr)
		}
		return &source{path: path, kind: kindGlob}, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w at %s", ErrNoOutput, path)
	}
	return nil, err
}

// list returns the output's files now, in the order they were written.
// Hidden files (a leading dot) of a directory are left out.
func (s *source) list() ([]*listed, error) {
	var paths []string
	switch s.kind {
	case kindFile:
		paths = []string{s.path}
	case kindDir:
		ents, err := os.ReadDir(s.path)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				paths = append(paths, filepath.Join(s.path, e.Name()))
			}
		}
	case kindGlob:
		m, err := filepath.Glob(s.path)
		if err != nil {
			return nil, err
		}
		paths = m
	}
	out := make([]*listed, 0, len(paths))
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // rotated or removed between the listing and now
		}
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			continue
		}
		l := &listed{path: p, name: filepath.Base(p), size: st.Size(), key: keyOf(st)}
		if l.key == (fileKey{}) {
			l.key.ino = fingerprint([]byte(p)) // no inode: known by name
		}
		if m := backupName.Get().FindStringSubmatch(l.name); m != nil {
			l.sealed, l.stamp = true, m[2]
			l.uniq, _ = strconv.Atoi(m[4])
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out, nil
}
