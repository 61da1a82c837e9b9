package main

import (
	"fmt"
	"os/exec"
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
	i := 1
	var moved []string
	var names []string
	var flagAt []int // where each flag starts in moved
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := flagNamed(root.Flags, name)
		if f == nil {
			return args, nil // --help, --version, a typo: the parser decides
		}
		flagAt = append(flagAt, len(moved))
		moved = append(moved, a)
		names = append(names, name)
		i++
		if takesValue(f) && !hasValue && i < len(args) {
			moved = append(moved, args[i])
			i++
		}
	}
	if len(moved) == 0 || i == len(args) {
		return args, nil
	}
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
	for k, name := range names {
		rf, lf := flagNamed(root.Flags, name), flagNamed(leaf.Flags, name)
		if lf != nil && takesValue(lf) == takesValue(rf) {
			continue
		}
		flag := strings.Join(moved[flagAt[k]:flagEnd(flagAt, k, len(moved))], " ")
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

// flagEnd is where flag k of moved ends.
func flagEnd(flagAt []int, k, n int) int {
	if k+1 < len(flagAt) {
		return flagAt[k+1]
	}
	return n
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

// didYouMean returns a hint for a run that found no command (exit 127)
// whose name is one letter or two off one of lcwrap's own commands, as in
// "lcwrap stauts"; "" otherwise. A name after "--", or one that is on
// PATH, gets none: the user asked for that program.
func didYouMean(root *cli.Command, args []string) string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			f := flagNamed(root.Flags, name)
			if f == nil {
				return ""
			}
			if takesValue(f) && !hasValue {
				i++
			}
		default:
			if _, err := exec.LookPath(a); err == nil {
				return ""
			}
			if s := suggest(a, subcommandNames()); s != "" && s != a {
				return "did you mean: lcwrap " + s + "?"
			}
			return ""
		}
	}
	return ""
}

// subcommandNames lists the subcommands table's names.
func subcommandNames() []string {
	names := make([]string, len(subcommands))
	for i, c := range subcommands {
		names[i] = c.name
	}
	return names
}
