package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// markdownFiles are the files whose links must resolve: README.md, docs/
// and every Markdown file under examples/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md"}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	err = filepath.WalkDir("../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
)

// links returns the link targets of a Markdown text outside code.
func links(text string) []string {
	var prose strings.Builder
	fenced := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			prose.WriteString(codeSpan.ReplaceAllString(line, ""))
		}
	}
	var out []string
	for _, re := range []*regexp.Regexp{inlineLink, refLink} {
		for _, m := range re.FindAllStringSubmatch(prose.String(), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the #fragments GitHub gives a Markdown text's headings.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	fenced := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := slugify(h)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// slugify is GitHub's heading anchor: lower case, punctuation dropped
// (but - and _), spaces to hyphens.
func slugify(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// Every relative link resolves to a file or directory in the repository,
// and every #anchor to a heading of its target.
func TestLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 5 {
		t.Fatalf("only %d Markdown files found: %v", len(files), files)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			checked++
			path, frag, _ := strings.Cut(l, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %q: %v", f, l, err)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			tb, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s: link %q: %v", f, l, err)
				continue
			}
			if !anchors(string(tb))[frag] {
				t.Errorf("%s: link %q: no heading #%s in %s", f, l, frag, target)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

func TestSlugify(t *testing.T) {
	for h, want := range map[string]string{
		"Interactive agents: `--pty` and `--activity output`":   "interactive-agents---pty-and---activity-output",
		"What is running, what ended, and how: `lcwrap status`": "what-is-running-what-ended-and-how-lcwrap-status",
		"Exit codes 124, 125, 126, 127":                         "exit-codes-124-125-126-127",
	} {
		if got := slugify(h); got != want {
			t.Errorf("slugify(%q) = %q, want %q", h, got, want)
		}
	}
	if l := links("see [a](x.md#y) and `[b](nope.md)`\n```\n[c](nope2.md)\n```\n[d]: ../e.md\n"); strings.Join(l, " ") != "x.md#y ../e.md" {
		t.Errorf("links = %q", l)
	}
}

// README quotes both start-up ratios bench/RESULTS.md gives for wrapping
// true (without the journal and with it), as measured there.
func TestStartupRatiosQuoted(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	results, err := os.ReadFile("../bench/RESULTS.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("Over the four runs: `--no-journal` ([0-9.]+–[0-9.]+×) tini .*, the default journal ([0-9.]+–[0-9.]+×) tini").FindSubmatch(results)
	if m == nil {
		t.Fatal("bench/RESULTS.md gives no start-up ratio ranges (Over the four runs: ...)")
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{"`--no-journal`", "default journal"} {
		if !strings.Contains(text, want) {
			t.Errorf("README does not name the %s start-up ratio", want)
		}
	}
	for i, what := range []string{"--no-journal", "default journal"} {
		if !strings.Contains(text, string(m[i+1])) {
			t.Errorf("README does not quote the %s start-up ratio %s of bench/RESULTS.md", what, m[i+1])
		}
	}
}

// README is a front door: at most 300 lines, and .ci/run runs exactly the
// test command it gives.
func TestFrontDoor(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md is %d lines; the front door holds at most 300: move the rest to docs/", n)
	}
	_, block, ok := strings.Cut(readme, "\n## Two commands\n")
	if !ok {
		t.Fatal("README.md has no '## Two commands' section")
	}
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	cmds := strings.Split(strings.TrimSpace(block), "\n")
	if len(cmds) != 2 {
		t.Fatalf("README's two commands are %d lines: %q", len(cmds), cmds)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	// After the suite, CI runs the fleet demo (the real Collectors, not
	// part of make test; README says so).
	if len(lines) > 1 && lines[len(lines)-1] == "make fleet-demo" {
		lines = lines[:len(lines)-1]
	}
	if last := lines[len(lines)-1]; last != cmds[1] {
		t.Errorf(".ci/run ends with %q; README's test command is %q", last, cmds[1])
	}
}

// README's first command builds the real binary as make build does
// (lcwrap-top beside it, for lcwrap top) and runs a command under it in
// one line, keeping the command's exit code (what go run loses).
func TestFirstCommand(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(b), "\n## Two commands\n")
	_, block, _ = strings.Cut(block, "```sh\n")
	first, _, _ := strings.Cut(block, "\n")
	if !strings.HasPrefix(first, "make build && bin/lcwrap ") {
		t.Fatalf("README's first command does not build and run the real binary (make build): %q", first)
	}
	if !strings.Contains(string(b), "go run ./cmd/lcwrap") || !strings.Contains(string(b), "exit status 3") {
		t.Errorf("README does not say why the first command is not go run ./cmd/lcwrap")
	}
	tmp := t.TempDir()
	line := strings.ReplaceAll(first, "bin/lcwrap", filepath.Join(tmp, "lcwrap"))
	line = strings.Replace(line, "make build", "make -s build BIN="+filepath.Join(tmp, "lcwrap"), 1)
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "LCWRAP_JOURNAL="+filepath.Join(tmp, "journal.jsonl"))
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "hello\nexit 3\n" {
		t.Fatalf("README's first command: %v, output %q; want hello and exit 3", err, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "lcwrap-top")); err != nil {
		t.Errorf("README's first command built no lcwrap-top beside lcwrap (lcwrap top needs it): %v", err)
	}
	j, err := os.ReadFile(filepath.Join(tmp, "journal.jsonl"))
	if err != nil || strings.Count(string(j), "\n") != 4 {
		t.Errorf("the journal after it: %v, %q; want its four events", err, j)
	}
}
