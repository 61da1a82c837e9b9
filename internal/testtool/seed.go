package testtool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SeedLines adds every line (under 4 KiB) of the files glob names to f's
// corpus: the one way fuzz targets are seeded from testdata/.
func SeedLines(f *testing.F, glob string) {
	paths, _ := filepath.Glob(glob)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if len(l) < 4096 {
				f.Add([]byte(l))
			}
		}
	}
}
