package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed rules_gen.go is what the tables generate: editing
// rules.txt or tools.txt without `go generate ./internal/redact` fails here.
func TestGeneratedIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..")
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want, err := generate(read("rules.txt"), read("tools.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := read("rules_gen.go"); !bytes.Equal(got, want) {
		t.Fatal("internal/redact/rules_gen.go is stale: run go generate ./internal/redact")
	}
}

// Every mistake a table line can hold is refused with its line number.
func TestGenerateRefuses(t *testing.T) {
	const tools = "curl - -u user:\n"
	const okRule = "token a-b gitleaks 0 - abc \\babc[0-9]+\n"
	for _, c := range []struct{ rules, tools, want string }{
		{"token a-b gitleaks 0 - abc\n", tools, "rules.txt:1: want 7 fields"},
		{"tokn a-b gitleaks 0 - abc x\n", tools, "kind \"tokn\""},
		{"token a-b github 0 - abc x\n", tools, "from is \"github\""},
		{"token a-b gitleaks 1 - abc x\n", tools, "secret group 1, the pattern has 0"},
		{"token a-b gitleaks 0 - abc (\n", tools, "missing closing )"},
		{"token a-b gitleaks 0 - Abc x\n", tools, "keyword \"Abc\""},
		{"token a-b gitleaks 0 - a x\n", tools, "keyword \"a\""},
		{"token a-b gitleaks 0 nine abc x\n", tools, "entropy \"nine\""},
		{"assign a-b gitleaks some - abc x\n", tools, "secret \"some\", want word or name"},
		{"grammar a-b lcwrap 1 - abc -\n", tools, "a grammar line has only keywords"},
		{"# nothing\n", tools, "no rules"},
		{okRule, "curl - -u user\n", "form \"user\""},
		{okRule, "curl - -u\n", "tools.txt:1: want 4 fields"},
		{okRule, "sqlplus - - next\n", "only the logon form has no flag"},
		{okRule, "curl - u user:\n", "does not start with -"},
		{okRule, "c* - -u user:\n", "shorter than 2 bytes"},
	} {
		_, err := generate([]byte(c.rules), []byte(c.tools))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("generate(%q, %q) = %v, want an error with %q", c.rules, c.tools, err, c.want)
		}
	}
	if _, err := generate([]byte(okRule), []byte(tools)); err != nil {
		t.Fatal(err)
	}
}
