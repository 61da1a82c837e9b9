package gemini

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	for _, c := range []struct {
		args string
		want Args
	}{
		{"", Args{}},
		{"-p hi -o stream-json", Args{Headless: true, Output: "stream-json"}},
		{"--prompt=hi --output-format=json", Args{Headless: true, Output: "json"}},
		{"mcp list", Args{Subcommand: "mcp"}},
		{"-m flash extensions list", Args{Subcommand: "extensions"}},
		{"--version", Args{Info: true}},
		{"--include-directories a b -p x", Args{Headless: true}},
		{"fix the mcp bug", Args{}}, // a prompt, not a subcommand: only the first positional counts
		{"-y hooks", Args{Subcommand: "hooks"}},
	} {
		if got := Inspect(strings.Fields(c.args)); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.args, got, c.want)
		}
	}
}

func TestRecordedArgv(t *testing.T) {
	for _, c := range []struct{ argv, want []string }{
		{[]string{"gemini", "-p", "secret", "-o", "stream-json"}, []string{"gemini", "-p", "[prompt]", "-o", "stream-json"}},
		{[]string{"gemini", "--prompt=secret", "-y"}, []string{"gemini", "--prompt=[prompt]", "-y"}},
		{[]string{"gemini", "-m", "flash", "secret", "words"}, []string{"gemini", "-m", "flash", "[prompt]", "[prompt]"}},
		{[]string{"gemini", "-i", "secret"}, []string{"gemini", "-i", "[prompt]"}},
		{[]string{"gemini", "mcp", "list"}, []string{"gemini", "mcp", "list"}},
		{[]string{"gemini", "--", "-p secret"}, []string{"gemini", "--", "[prompt]"}},
	} {
		if got := RecordedArgv(c.argv); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.argv, got, c.want)
		}
	}
}

// TestRunSettings: lcwrap's hooks come after the system defaults' own,
// which stay as they were; what cannot be merged is refused.
func TestRunSettings(t *testing.T) {
	base := `{"general":{"vimMode":true},"hooks":{"BeforeTool":[{"matcher":"x","hooks":[{"type":"command","command":"mine"}]}]}}`
	b, err := RunSettings([]byte(base), "/usr/bin/lc'wrap")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		General map[string]any         `json:"general"`
		Hooks   map[string][]hookGroup `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.General["vimMode"] != true {
		t.Errorf("own setting lost: %s", b)
	}
	bt := s.Hooks["BeforeTool"]
	if len(bt) != 2 || bt[0].Hooks[0].Command != "mine" || bt[1].Hooks[0].Command != `'/usr/bin/lc'\''wrap' hook gemini --relay || exit 1` {
		t.Errorf("BeforeTool: %+v", bt)
	}
	if len(s.Hooks) != len(Events) {
		t.Errorf("events: %d, want %d", len(s.Hooks), len(Events))
	}
	if h := s.Hooks["SessionStart"][0].Hooks[0]; h.Env["LCWRAP_HOOK_TOKEN"] != "${LCWRAP_HOOK_TOKEN}" || h.Timeout != HookTimeoutMs {
		t.Errorf("the hook must take its token from the agent's environment, never hold it: %+v", h)
	}
	for _, bad := range []string{`[1]`, `{"hooks":[1]}`, `{"hooks":{"X":1}}`, `// c` + "\n{}", `null`} {
		if _, err := RunSettings([]byte(bad), "lcwrap"); err == nil {
			t.Errorf("%q merged", bad)
		}
	}
	if _, err := RunSettings(nil, "lcwrap"); err != nil {
		t.Errorf("no defaults: %v", err)
	}
}
