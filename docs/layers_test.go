package docs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lcwrap/lcwrap/"

// layer is one row of design.md's layer table: its name and packages
// (module-relative: "internal/event", "cmd/lcwrap"). rank orders them:
// the table's last row is 0.
type layer struct {
	name     string
	packages []string
	rank     int
}

// testsOnly is the layer of test support: no package outside it imports
// one of its packages (tests do).
const testsOnly = "tests only"

var tablePackage = regexp.MustCompile("`([^`]+)`")

// layerTable reads the table under "## Layers" in design.md: rows from the
// highest layer to the lowest, the packages in backquotes in the second
// column.
func layerTable(t *testing.T) []layer {
	t.Helper()
	b, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Layers\n")
	if !ok {
		t.Fatal(`design.md has no "## Layers" section`)
	}
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	var layers []layer
	header := true
	for line := range strings.Lines(rest) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if len(layers) > 0 {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			t.Fatalf("design.md: a layer row with %d cells: %q", len(cells), line)
		}
		if header {
			if strings.TrimSpace(cells[0]) != "layer" || strings.TrimSpace(cells[1]) != "packages" {
				t.Fatalf("design.md: the layer table's header is %q, want | layer | packages | job |", line)
			}
			header = false
			continue
		}
		if strings.Trim(strings.TrimSpace(cells[0]), "-") == "" {
			continue // the separator row
		}
		l := layer{name: strings.TrimSpace(cells[0])}
		for _, m := range tablePackage.FindAllStringSubmatch(cells[1], -1) {
			l.packages = append(l.packages, m[1])
		}
		if len(l.packages) == 0 {
			t.Fatalf("design.md: layer %q names no package", l.name)
		}
		layers = append(layers, l)
	}
	if len(layers) < 3 {
		t.Fatalf("design.md: only %d layers read", len(layers))
	}
	for i := range layers {
		layers[i].rank = len(layers) - 1 - i
	}
	return layers
}

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Imports    []string
	Name       string
}

// modulePackages lists the module's packages with their direct imports
// (not their tests'), keyed by module-relative path.
func modulePackages(t *testing.T) map[string]listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Name", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		pkgs[rel] = p
	}
	return pkgs
}

// outsideLayers are the module's packages no layer holds: benchmarks,
// examples and this documentation.
func outsideLayers(rel string) bool {
	return rel == "docs" || rel == "examples" || strings.HasPrefix(rel, "bench/") || strings.HasPrefix(rel, "examples/")
}

// design.md's layer table is the import graph's: each package imports
// only packages of its own layer or below (go list, the packages' own
// files, not their tests), nothing imports test support, and every
// package of the module (but benchmarks, examples and docs) is in the
// table, once. A package the table lists that does not exist yet (one
// being written) is tolerated, and said.
func TestLayersHoldTheImportGraph(t *testing.T) {
	layers := layerTable(t)
	rank := map[string]int{}
	layerOf := map[string]string{}
	for _, l := range layers {
		for _, p := range l.packages {
			if _, dup := rank[p]; dup {
				t.Errorf("design.md lists %s twice", p)
			}
			rank[p], layerOf[p] = l.rank, l.name
		}
	}
	pkgs := modulePackages(t)
	var names []string
	for rel := range pkgs {
		names = append(names, rel)
	}
	slices.Sort(names)
	for _, rel := range names {
		if outsideLayers(rel) {
			continue
		}
		r, ok := rank[rel]
		if !ok {
			t.Errorf("%s is in no layer of design.md's table: add it to the layer whose job it does", rel)
			continue
		}
		for _, imp := range pkgs[rel].Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			dr, ok := rank[dep]
			switch {
			case !ok:
				// Reported above as a package in no layer.
			case layerOf[dep] == testsOnly && layerOf[rel] != testsOnly:
				t.Errorf("%s (%s) imports %s, which is test support", rel, layerOf[rel], dep)
			case dr > r:
				t.Errorf("%s (layer %q) imports %s (layer %q, above it)", rel, layerOf[rel], dep, layerOf[dep])
			}
		}
	}
	for _, l := range layers {
		for _, p := range l.packages {
			if _, ok := pkgs[p]; !ok {
				t.Logf("design.md lists %s (%s), which does not exist yet", p, l.name)
			}
		}
	}
}

// The test reads what it should: a table with the event core above the
// system layer, and an import against the layers is found.
func TestLayerTableIsRead(t *testing.T) {
	layers := layerTable(t)
	rank := map[string]int{}
	for _, l := range layers {
		for _, p := range l.packages {
			rank[p] = l.rank
		}
	}
	for _, p := range []string{"cmd/lcwrap", "internal/event", "internal/supervise", "internal/redact", "internal/linereader"} {
		if _, ok := rank[p]; !ok {
			t.Fatalf("%s not read from the table", p)
		}
	}
	if !(rank["cmd/lcwrap"] > rank["internal/supervise"] && rank["internal/supervise"] > rank["internal/event"] && rank["internal/event"] > rank["internal/redact"]) {
		t.Fatalf("ranks %v", rank)
	}
}
