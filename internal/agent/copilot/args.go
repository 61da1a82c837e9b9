package copilot

import "strings"

// Args is what lcwrap needs to know of a copilot command line.
type Args struct {
	// Subcommand is a management command (login, config, plugin, mcp,
	// …): no session runs.
	Subcommand string
	// Info: --help or --version: no session runs.
	Info bool
	// Prompt: -p/--prompt was given (non-interactive).
	Prompt bool
	// Output is --output-format's value ("" when not given: text).
	Output string
}

// valueFlag reports whether a is one of copilot 1.0.102's options that
// take a value as the next argument.
func valueFlag(a string) bool {
	switch a {
	case "-i", "--interactive", "-p", "--prompt", "--model", "--reasoning-effort", "--context", "--auto-tier",
		"--agent", "-n", "--name", "--session-id", "-C", "--log-dir", "--extension-sdk-path", "--log-level",
		"--stream", "--output-format", "--add-dir", "--attachment", "--disable-mcp-server", "--add-github-mcp-toolset",
		"--add-github-mcp-tool", "--plugin-dir", "--additional-mcp-config", "--mcp-github-auth",
		"--max-autopilot-continues", "--mode", "--environment-host", "--environment-compute-id",
		"--dynamic-retrieval", "--enable-mcp-server", "--max-ai-credits", "--usage-output-file":
		return true
	}
	return false
}

func subcommand(a string) bool {
	switch a {
	case "app", "login", "help", "init", "config", "update", "version", "workflow", "sessions", "memories",
		"plugin", "mcp", "skill", "instruction", "lsp", "sandbox", "completion":
		return true
	}
	return false
}

func promptFlag(a string) bool {
	return a == "-p" || a == "--prompt" || a == "-i" || a == "--interactive"
}

// Inspect reads args (the command line without the program).
func Inspect(args []string) Args {
	var r Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, value, eq := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			flag, value, eq = a, "", false
		}
		switch {
		case a == "--":
			return r
		case !strings.HasPrefix(a, "-"):
			if subcommand(a) {
				r.Subcommand = a
			}
			return r // copilot takes no positional but a command
		case flag == "-h" || flag == "--help" || flag == "-v" || flag == "--version":
			r.Info = true
		case valueFlag(flag):
			if !eq && i+1 < len(args) {
				i++
				value = args[i]
			}
			switch flag {
			case "-p", "--prompt":
				r.Prompt = true
			case "--output-format":
				r.Output = value
			}
		}
	}
	return r
}

// RecordedArgv is argv as the created event records it: the prompts of
// -p and -i replaced by "[prompt]".
func RecordedArgv(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if flag, _, eq := strings.Cut(a, "="); eq && strings.HasPrefix(a, "--") {
			if promptFlag(flag) {
				out[i] = flag + "=[prompt]"
			}
			continue
		}
		if valueFlag(a) && i+1 < len(out) {
			if promptFlag(a) {
				out[i+1] = "[prompt]"
			}
			i++
		}
	}
	return out
}
