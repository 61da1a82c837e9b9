package copilot

import (
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
		{"-p hi --output-format json", Args{Prompt: true, Output: "json"}},
		{"--prompt=hi --output-format=json", Args{Prompt: true, Output: "json"}},
		{"login", Args{Subcommand: "login"}},
		{"--model gpt-4.1 mcp list", Args{Subcommand: "mcp"}},
		{"--version", Args{Info: true}},
		{"-i login", Args{}}, // -i's value, not a command
	} {
		if got := Inspect(strings.Fields(c.args)); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.args, got, c.want)
		}
	}
}

func TestRecordedArgv(t *testing.T) {
	for _, c := range []struct{ argv, want []string }{
		{[]string{"copilot", "-p", "secret", "--output-format", "json"}, []string{"copilot", "-p", "[prompt]", "--output-format", "json"}},
		{[]string{"copilot", "--prompt=secret"}, []string{"copilot", "--prompt=[prompt]"}},
		{[]string{"copilot", "-i", "secret", "--model", "m"}, []string{"copilot", "-i", "[prompt]", "--model", "m"}},
	} {
		if got := RecordedArgv(c.argv); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.argv, got, c.want)
		}
	}
}
