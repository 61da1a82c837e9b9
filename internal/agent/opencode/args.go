package opencode

import (
	"strings"

	"github.com/lcwrap/lcwrap/internal/lazy"
)

// Args is what lcwrap needs to know of an opencode command line.
type Args struct {
	// Subcommand is the command given ("" : the TUI; "run"; any other is
	// a command lcwrap does not follow: serve, attach, models, …).
	Subcommand string
	// Info: --help or --version.
	Info bool
	// Format is `run --format`'s value.
	Format string
	// Port is --port's value as given ("" : none).
	Port string
}

// commands are opencode 1.18.33's subcommands.
var commands = lazy.Value[map[string]bool]{Make: func() map[string]bool {
	return map[string]bool{
		"completion": true, "acp": true, "mcp": true, "attach": true, "run": true, "debug": true, "providers": true, "auth": true,
		"agent": true, "upgrade": true, "uninstall": true, "serve": true, "web": true, "models": true, "stats": true,
		"export": true, "import": true, "github": true, "pr": true, "session": true, "plugin": true, "plug": true, "db": true,
	}
}}

// valueFlag reports whether a is one of opencode 1.18.33's options that
// take a value as the next argument.
func valueFlag(a string) bool {
	switch a {
	case "--log-level", "--port", "--hostname", "--mdns-domain", "--cors", "-m", "--model", "-s", "--session",
		"--prompt", "--agent", "--format", "-f", "--file", "--title", "--attach", "-p", "--password",
		"-u", "--username", "--dir", "--variant", "--command":
		return true
	}
	return false
}

// Inspect reads args (the command line without the program).
func Inspect(args []string) Args {
	var r Args
	positional := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if !positional && r.Subcommand == "" && commands.Get()[a] {
				r.Subcommand = a
			}
			positional = true
			continue
		}
		flag, value, eq := strings.Cut(a, "=")
		switch flag {
		case "-h", "--help", "-v", "--version":
			r.Info = true
		}
		if valueFlag(flag) && !eq && i+1 < len(args) {
			i++
			value = args[i]
		}
		switch flag {
		case "--format":
			r.Format = value
		case "--port":
			r.Port = value
		}
	}
	return r
}
