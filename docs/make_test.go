package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// makeRaceCheck runs make's race-check with env added to the test's own
// (without CI), and returns its output and whether it succeeded.
func makeRaceCheck(t *testing.T, env []string, args ...string) (string, bool) {
	t.Helper()
	mk := testtool.Need(t, "make", "apt-get install make")
	cmd := exec.Command(mk, append([]string{"-s", "-C", "..", "race-check"}, args...)...)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "CI" && k != "CGO_ENABLED" && k != "RACE" && k != "MAKEFLAGS" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// make test says truly why it runs without the race detector: cgo turned
// off in the environment is not a missing compiler.
func TestMakeSaysWhyNoRace(t *testing.T) {
	out, ok := makeRaceCheck(t, []string{"CGO_ENABLED=0"})
	if !ok || !strings.Contains(out, "CGO_ENABLED=0 is set in the environment") || !strings.Contains(out, "WITHOUT the race detector; unset CGO_ENABLED") || strings.Contains(out, "install gcc") {
		t.Errorf("CGO_ENABLED=0 make test says: %q", out)
	}
	if out, ok := makeRaceCheck(t, []string{"CGO_ENABLED=0", "CI=true"}); ok || !strings.Contains(out, "no race detector: CGO_ENABLED=0 is set in the environment") {
		t.Errorf("under CI=true, CGO_ENABLED=0 make test: ok %v, %q; want a failure saying why", ok, out)
	}
	// No compiler: go is found by its path, nothing else is on PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	goTool, _ = filepath.Abs(goTool)
	if out, ok := makeRaceCheck(t, []string{"PATH=" + t.TempDir()}, "GO="+goTool); !ok || !strings.Contains(out, "go finds no C compiler") || !strings.Contains(out, "install gcc or clang") {
		t.Errorf("make test without a C compiler says: %q", out)
	}
	// With cgo on and a compiler, nothing is said.
	if _, err := exec.LookPath("gcc"); err == nil {
		if out, ok := makeRaceCheck(t, nil); !ok || out != "" {
			t.Errorf("make test with gcc says: %q", out)
		}
	}
}

// make fuzz runs every fuzz target: its list (make fuzz-list) is the set
// of FuzzXxx(*testing.F) functions go/parser finds in the module's tests.
func TestMakeFuzzListsEveryTarget(t *testing.T) {
	mk := testtool.Need(t, "make", "apt-get install make")
	cmd := exec.Command(mk, "-s", "-C", "..", "fuzz-list")
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make fuzz-list: %v", err)
	}
	listed := strings.Fields(string(out))
	var want []string
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
					want = append(want, "./"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(p, "../"))), fn.Name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pairs := func(s []string) []string {
		var out []string
		for i := 0; i+1 < len(s); i += 2 {
			out = append(out, s[i]+" "+s[i+1])
		}
		slices.Sort(out)
		return out
	}
	if got, w := pairs(listed), pairs(want); !slices.Equal(got, w) || len(w) == 0 {
		t.Errorf("make fuzz-list:\n%s\nthe fuzz targets in the tests:\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}
