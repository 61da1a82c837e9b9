package doccapture

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the documentation captures from this run")

// markerRe is a capture's marker line.
var markerRe = regexp.MustCompile(`^<!-- capture: ([A-Za-z0-9_.-]+) -->$`)

// block is one capture in a file: its lines [start, end) and their text
// (without the indentation of an indented block).
type block struct {
	name       string
	start, end int
	fenced     bool
	text       string
}

// blocks finds the captures of a Markdown text.
func blocks(lines []string) ([]block, error) {
	var out []block
	for i, l := range lines {
		m := markerRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		b := block{name: m[1], start: i + 1}
		if b.start >= len(lines) {
			return nil, fmt.Errorf("capture %s: no block after its marker", b.name)
		}
		var body []string
		switch first := lines[b.start]; {
		case strings.HasPrefix(first, "```"):
			b.fenced = true
			j := b.start + 1
			for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
				body = append(body, lines[j])
				j++
			}
			if j == len(lines) {
				return nil, fmt.Errorf("capture %s: its fenced block is not closed", b.name)
			}
			b.end = j + 1
		case strings.HasPrefix(first, "    "):
			// Blank lines inside it belong to it when an indented line
			// follows them.
			j := b.start
			for j < len(lines) {
				if strings.HasPrefix(lines[j], "    ") {
					body = append(body, lines[j][4:])
					j++
					continue
				}
				k := j
				for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
					k++
				}
				if k == j || k == len(lines) || !strings.HasPrefix(lines[k], "    ") {
					break
				}
				for ; j < k; j++ {
					body = append(body, "")
				}
			}
			b.end = j
		default:
			return nil, fmt.Errorf("capture %s: the line after its marker starts no code block", b.name)
		}
		b.text = strings.Join(body, "\n")
		out = append(out, b)
	}
	return out, nil
}

// Names lists the captures of a Markdown file, in order.
func Names(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	bs, err := blocks(strings.Split(string(b), "\n"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.name)
	}
	return names, nil
}

// Check compares capture name of file with got, the transcript of a real
// run (see Normalize), and fails t when they differ. With -update it
// writes got into the file instead.
func Check(t testing.TB, file, name, got string) {
	t.Helper()
	got = strings.TrimRight(got, "\n")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	bs, err := blocks(lines)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var b *block
	for i := range bs {
		if bs[i].name == name {
			if b != nil {
				t.Fatalf("%s: two captures named %s", file, name)
			}
			b = &bs[i]
		}
	}
	if b == nil {
		t.Fatalf("%s has no capture %s (mark its block with '<!-- capture: %s -->')", file, name, name)
	}
	if *update {
		var body []string
		for _, l := range strings.Split(got, "\n") {
			if !b.fenced && l != "" {
				l = "    " + l
			}
			body = append(body, l)
		}
		if b.fenced {
			body = append(append([]string{lines[b.start]}, body...), "```")
		}
		out := append(append(append([]string(nil), lines[:b.start]...), body...), lines[b.end:]...)
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want, have := Normalize(b.text), Normalize(got); want != have {
		t.Errorf("%s: capture %s is not what the binary prints now (go test -run %s -update rewrites it)\n--- in the file:\n%s\n--- this run:\n%s\n--- compared (file, then run):\n%s\n---\n%s",
			file, name, t.Name(), b.text, got, want, have)
	}
}

// masks replace what changes from run to run, in this order.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "TIME"},
	{regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "UUID"},
	{regexp.MustCompile(`\b[a-z0-9]{8}-[a-z0-9]{8}\b`), "EPOCH"}, // a run's sourceEpoch
	// The machine's, and (check) which of two observers was first.
	{regexp.MustCompile(`"(host|executable|check)":"[^"]*"`), `"$1":"X"`},
	{regexp.MustCompile(`/tmp(/[A-Za-z0-9._-]+)+`), "/tmp/X"},
	// One unit (850ms, 42s, <1s) or two (3m07s, 2h05m, 3d04h).
	{regexp.MustCompile(`<?\b\d+(\.\d+)?(ms|s|m|h|d)(\d\d(s|m|h))?\b`), "DUR"},
	{regexp.MustCompile(`\d+`), "N"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

// Normalize is what Check compares: s with times, durations, numbers,
// ids, temporary paths and the host masked, runs of blanks made one and
// trailing blanks dropped.
func Normalize(s string) string {
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
