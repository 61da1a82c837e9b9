package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
)

// flagReader is what a command's action reads its flags and arguments
// through: a parsed *cli.Command, or the result of quickFlags.
type flagReader interface {
	String(name string) string
	Bool(name string) bool
	Duration(name string) time.Duration
	Int(name string) int
	Int64(name string) int64
	StringSlice(name string) []string
	IsSet(name string) bool
	FullName() string
	Args() cli.Args
}

// quickFlags is the command line of the two invocations whose start-up
// is measured — a run ("lcwrap [flags] [--] CMD ...", "lcwrap run ...")
// and "lcwrap emit [flags]" — read without setting up urfave/cli, from
// the very flag definitions the parser uses. It takes only what it is
// sure of: a flag it does not know, a value that does not parse, a
// positional argument where none belongs, "-h" or "--help": it declines,
// and the parser reads the line (with its errors and help). A test
// checks that both read every accepted line alike.
type quickFlags struct {
	name   string
	flags  map[string]cli.Flag // by every name and alias
	values map[string]any      // canonical flag name → value given
	args   []string
	dashed bool // the positional arguments came after "--"
}

// readQuick reads args (the arguments after the command's name) against
// flags. With positional, the first argument that is not a flag (or the
// one after "--") starts the positional ones; without, any such argument
// makes it decline.
func readQuick(name string, flags []cli.Flag, args []string, positional bool) (*quickFlags, bool) {
	q := &quickFlags{name: name, flags: make(map[string]cli.Flag, len(flags)), values: map[string]any{}}
	for _, f := range flags {
		for _, n := range f.Names() {
			q.flags[n] = f
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if !positional {
				return nil, false
			}
			q.args, q.dashed = args[i+1:], true
			return q, true
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			if !positional {
				return nil, false
			}
			q.args = args[i:]
			return q, true
		}
		body := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if body == "" || body[0] == '-' {
			return nil, false
		}
		n, val, hasVal := strings.Cut(body, "=")
		f := q.flags[n]
		if f == nil {
			return nil, false
		}
		key := f.Names()[0]
		if _, isBool := f.(*cli.BoolFlag); isBool {
			b := true
			if hasVal {
				var err error
				if b, err = strconv.ParseBool(val); err != nil {
					return nil, false
				}
			}
			q.values[key] = b
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, false
			}
			i++
			val = args[i]
		}
		switch f.(type) {
		case *cli.StringFlag:
			q.values[key] = val
		case *cli.StringSliceFlag:
			prev, _ := q.values[key].([]string)
			q.values[key] = append(prev, val)
		case *cli.DurationFlag:
			d, err := time.ParseDuration(val)
			if err != nil {
				return nil, false
			}
			q.values[key] = d
		case *cli.IntFlag:
			v, err := strconv.ParseInt(val, 0, 64)
			if err != nil {
				return nil, false
			}
			q.values[key] = int(v)
		case *cli.Int64Flag:
			v, err := strconv.ParseInt(val, 0, 64)
			if err != nil {
				return nil, false
			}
			q.values[key] = v
		default:
			return nil, false // a kind this reader does not know
		}
	}
	if positional {
		return nil, false // a run needs a command: let the parser say so
	}
	return q, true
}

// value returns the flag's value as given, else its default.
func (q *quickFlags) value(name string) any {
	f := q.flags[name]
	if f == nil {
		return nil
	}
	if v, ok := q.values[f.Names()[0]]; ok {
		return v
	}
	switch t := f.(type) {
	case *cli.BoolFlag:
		return t.Value
	case *cli.StringFlag:
		return t.Value
	case *cli.StringSliceFlag:
		return t.Value
	case *cli.DurationFlag:
		return t.Value
	case *cli.IntFlag:
		return t.Value
	case *cli.Int64Flag:
		return t.Value
	}
	return nil
}

func (q *quickFlags) String(name string) string { s, _ := q.value(name).(string); return s }
func (q *quickFlags) Bool(name string) bool     { b, _ := q.value(name).(bool); return b }
func (q *quickFlags) Duration(name string) time.Duration {
	d, _ := q.value(name).(time.Duration)
	return d
}
func (q *quickFlags) Int(name string) int { n, _ := q.value(name).(int); return n }
func (q *quickFlags) Int64(name string) int64 {
	switch n := q.value(name).(type) {
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}
func (q *quickFlags) StringSlice(name string) []string { s, _ := q.value(name).([]string); return s }

// IsSet reports whether the flag was given (no run or emit flag reads
// the environment).
func (q *quickFlags) IsSet(name string) bool {
	f := q.flags[name]
	if f == nil {
		return false
	}
	_, ok := q.values[f.Names()[0]]
	return ok
}

func (q *quickFlags) FullName() string { return q.name }
func (q *quickFlags) Args() cli.Args   { return quickArgs(q.args) }

// quickArgs are the positional arguments, as cli.Args.
type quickArgs []string

func (a quickArgs) Get(n int) string {
	if n >= 0 && n < len(a) {
		return a[n]
	}
	return ""
}
func (a quickArgs) First() string { return a.Get(0) }
func (a quickArgs) Tail() []string {
	if len(a) < 2 {
		return []string{}
	}
	return append([]string(nil), a[1:]...)
}
func (a quickArgs) Len() int        { return len(a) }
func (a quickArgs) Present() bool   { return len(a) > 0 }
func (a quickArgs) Slice() []string { return append([]string(nil), a...) }
