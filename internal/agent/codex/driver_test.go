package codex

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		argv string
		want Mode
	}{
		{"codex", ModeInteractive},
		{"codex fix the tests", ModeInteractive},
		{"codex -m gpt-5.5 -c x=1 fix", ModeInteractive},
		{"codex resume --last", ModeInteractive},
		{"codex exec --json hi", ModeExec},
		{"codex -c model=x exec --skip-git-repo-check --json -", ModeExec},
		{"codex e --experimental-json hi", ModeExec},
		{"codex exec hi", ModeNone},
		{"codex exec -- --json", ModeNone},
		{"codex exec --help --json", ModeNone},
		{"codex login", ModeNone},
		{"codex app-server --listen unix://", ModeNone},
		{"codex --version", ModeNone},
		{"codex -m exec", ModeInteractive}, // "exec" is -m's value
		{"codex -- exec --json", ModeInteractive},
	}
	for _, c := range cases {
		if got := Classify(split(c.argv)); got != c.want {
			t.Errorf("%s: %v, want %v", c.argv, got, c.want)
		}
	}
	if !(Driver{}).Recognize([]string{"/usr/bin/codex"}) || (Driver{}).Recognize([]string{"codex-helper"}) {
		t.Errorf("Recognize is by the base name codex")
	}
}

func split(s string) []string { return strings.Fields(s) }

func TestProcessMode(t *testing.T) {
	for argv, want := range map[string]Mode{
		"node /usr/bin/codex":                                           ModeInteractive,
		"/usr/lib/node_modules/x/bin/codex exec --json hi":              ModeExec,
		"/home/u/.codex/packages/bin/codex app-server --listen unix://": ModeNone,
		"node server.js": ModeNone,
		"bash":           ModeNone,
	} {
		if got := ProcessMode(strings.Fields(argv)); got != want {
			t.Errorf("%s: %v, want %v", argv, got, want)
		}
	}
}
