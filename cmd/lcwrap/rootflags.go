package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
)

// placeRootFlags handles flags written before a subcommand, as in
// "lcwrap --journal J status": they parse as the root's run flags, which
// the subcommand would never see. Each one the subcommand has too (same
// name, same kind) is moved after the subcommand's name, where it applies
// exactly as if it had been written there; any other is a usage error
// saying where it belongs. Arguments that do not start with root flags
// followed by a subcommand come back unchanged.
func placeRootFlags(root *cli.Command, args []string) ([]string, error) {
	starts, i, ok := skipFlags(root.Flags, args)
	if !ok || len(starts) == 0 || i == len(args) || args[i] == "--" {
		return args, nil // no flag before a word, or one the parser decides on
	}
	moved := args[1:i]
	leaf := root.Command(args[i])
	if leaf == nil {
		return args, nil // a command to run
	}
	j := i + 1
	for j < len(args) {
		sub := leaf.Command(args[j])
		if sub == nil {
			break
		}
		leaf, j = sub, j+1
	}
	full := "lcwrap " + strings.Join(args[i:j], " ")
	for k, at := range starts {
		name, _, _ := strings.Cut(strings.TrimLeft(args[at], "-"), "=")
		rf, lf := flagNamed(root.Flags, name), flagNamed(leaf.Flags, name)
		if lf != nil && takesValue(lf) == takesValue(rf) {
			continue
		}
		next := i
		if k+1 < len(starts) {
			next = starts[k+1]
		}
		flag := strings.Join(args[at:next], " ")
		var msg string
		if len(leaf.Commands) > 0 {
			msg = fmt.Sprintf("%s goes after the command of '%s', e.g. '%s %s %s'", flag, full, full, leaf.Commands[0].Name, flag)
		} else {
			msg = fmt.Sprintf("'%s' has no --%s (a run flag)", full, name)
			if args[i] != "run" {
				msg += fmt.Sprintf("; to run a program named %s: 'lcwrap %s -- %s'", args[i], strings.Join(moved, " "), strings.Join(args[i:], " "))
			}
		}
		return nil, &usageError{cmd: full, msg: msg}
	}
	out := make([]string, 0, len(args))
	out = append(out, args[:1]...)
	out = append(out, args[i:j]...)
	out = append(out, moved...)
	return append(out, args[j:]...), nil
}

// flagNamed returns the flag of flags with that name or alias, or nil.
func flagNamed(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
}

// mistypedCommand returns a usage error's message for "lcwrap WORD ...",
// the prefix form without "--", when WORD is not a program on PATH and is
// one letter or two off one of lcwrap's own commands ("lcwrap stauts");
// "" otherwise, and the word is a command to run (a missing one is then
// exit 127 and a failed event). After "--", or on PATH, the word is the
// program the user asked for.
func mistypedCommand(args []string) string {
	_, i, ok := skipFlags(plainRunFlags.Get(), args)
	if !ok || i >= len(args) || args[i] == "--" {
		return ""
	}
	w, names := args[i], subcommandNames()
	if slices.Contains(names, w) {
		return ""
	}
	s := suggest(w, names)
	if s == "" {
		return ""
	}
	if _, err := exec.LookPath(w); err == nil {
		return ""
	}
	run := strings.Join(append(append([]string{"lcwrap"}, args[1:i]...), "--", w), " ")
	return fmt.Sprintf("lcwrap has no command %q, and no program of that name is on PATH; did you mean: lcwrap %s? (to run a program named %s: '%s')", w, s, w, run)
}

// subcommandNames lists the subcommands table's names.
func subcommandNames() []string {
	names := make([]string, len(subcommands))
	for i, c := range subcommands {
		names[i] = c.name
	}
	return names
}
