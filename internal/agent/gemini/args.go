package gemini

import "strings"

// Args is what lcwrap needs to know of a gemini command line.
type Args struct {
	// Subcommand is a management command (mcp, extensions, skills, hooks,
	// gemma): no session runs.
	Subcommand string
	// Info: --help, --version, --list-extensions, --list-sessions,
	// --delete-session: no session runs.
	Info bool
	// Headless: -p/--prompt was given.
	Headless bool
	// Output is --output-format's value ("" when not given: text).
	Output string
}

// valueFlag reports whether a is one of gemini 0.61.0's options that take
// a value; array reports whether it takes every following argument up to
// the next option (yargs arrays).
func valueFlag(a string) (value, array bool) {
	switch a {
	case "-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive", "-w", "--worktree",
		"--approval-mode", "-r", "--resume", "--session-file", "--session-id", "--delete-session",
		"-o", "--output-format":
		return true, false
	case "--policy", "--admin-policy", "--allowed-mcp-server-names", "--allowed-tools", "-e", "--extensions",
		"--include-directories":
		return true, true
	}
	return false, false
}

// promptFlag reports whether a's value is a prompt (never recorded).
func promptFlag(a string) bool {
	switch a {
	case "-p", "--prompt", "-i", "--prompt-interactive":
		return true
	}
	return false
}

func subcommand(a string) bool {
	switch a {
	case "mcp", "extensions", "extension", "skills", "skill", "hooks", "hook", "gemma":
		return true
	}
	return false
}

// Inspect reads args (the command line without the program).
func Inspect(args []string) Args {
	var r Args
	first := firstPositional(args)
	walk(args, func(i int, flag, value string, positional bool) {
		switch {
		case positional:
			if i == first && subcommand(value) {
				r.Subcommand = value
			}
		case flag == "-h" || flag == "--help" || flag == "-v" || flag == "--version" || flag == "-l" ||
			flag == "--list-extensions" || flag == "--list-sessions" || flag == "--delete-session":
			r.Info = true
		case flag == "-p" || flag == "--prompt":
			r.Headless = true
		case flag == "-o" || flag == "--output-format":
			r.Output = value
		}
	})
	return r
}

// RecordedArgv is argv as the created event records it: prompts (-p, -i
// and the positional query) replaced by "[prompt]".
func RecordedArgv(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	out := append([]string(nil), argv...)
	args := out[1:]
	sub, first := false, firstPositional(args)
	walk(args, func(i int, flag, value string, positional bool) {
		switch {
		case positional && i == first && subcommand(value):
			sub = true
		case positional && !sub:
			args[i] = "[prompt]"
		case promptFlag(flag) && i >= 0:
			if strings.HasPrefix(args[i], flag+"=") {
				args[i] = flag + "=[prompt]"
			} else {
				args[i] = "[prompt]"
			}
		}
	})
	return out
}

// walk calls fn for every option (flag, its value and the index of the
// argument holding the value, -1 when none) and every positional.
func walk(args []string, fn func(i int, flag, value string, positional bool)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				fn(j, "", args[j], true)
			}
			return
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			flag, v, _ := strings.Cut(a, "=")
			fn(i, flag, v, false)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			value, array := valueFlag(a)
			if !value {
				fn(-1, a, "", false)
				continue
			}
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				fn(-1, a, "", false) // no value given
				continue
			}
			i++
			fn(i, a, args[i], false)
			for array && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				fn(i, a, args[i], false)
			}
		default:
			fn(i, "", a, true)
		}
	}
}

// firstPositional is the index of the first positional argument (-1: none).
func firstPositional(args []string) int {
	first := -1
	walk(args, func(i int, _, _ string, positional bool) {
		if positional && first < 0 {
			first = i
		}
	})
	return first
}
