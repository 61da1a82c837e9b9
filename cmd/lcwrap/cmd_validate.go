package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

func validateCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check that a stream holds valid schema-v1 events",
		ArgsUsage: "[FILE...|-]",
		Description: "Reads each FILE (or standard input) line by line and prints a summary:\n" +
			"N valid, M invalid, with counts by class (malformed, oversized, invalid-utf8,\n" +
			"schema, truncated) and up to 32 redacted diagnostics per input. A character\n" +
			"of the input a terminal would act on is shown as an escape (\\u001b, \\xff).\n" +
			"A FILE that is not a regular file (a FIFO, a device, /dev/fd/N from <(...))\n" +
			"is read as a stream, to its end, like standard input: one that never ends\n" +
			"(/dev/zero, a FIFO whose writer stays) keeps validate reading.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "mixed", Usage: "count lines that are not lifecycle events as log lines (a CI log)"},
			&cli.IntFlag{Name: "max-line-bytes", Value: linereader.DefaultMaxBytes, Usage: "longest accepted line, in bytes"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the summary, no diagnostics"},
			&cli.BoolFlag{Name: "require-events", Usage: "fail when an input holds no valid event (a CI log where lcwrap never ran)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			max := cmd.Int("max-line-bytes")
			if max <= 0 {
				return usagef(cmd, "--max-line-bytes must be a positive number of bytes, not %d", max)
			}
			inputs := cmd.Args().Slice()
			if len(inputs) == 0 {
				inputs = []string{"-"}
			}
			opts := event.DecoderOptions{MaxLineBytes: max, Mixed: cmd.Bool("mixed"), Redact: redact.Text}
			allValid := true
			var total event.Stats
			for _, name := range inputs {
				st, ok, err := validateOne(std, name, opts, cmd.Bool("quiet"), len(inputs) > 1)
				if err != nil {
					return exitCode(1, "validate %s: %v", name, err)
				}
				allValid = allValid && ok
				if st.Valid == 0 {
					in := name
					if in == "-" {
						in = "standard input"
					}
					msg := fmt.Sprintf("%s holds no lifecycle events: lcwrap did not run there, or its events went elsewhere (--emit stderr puts them in a CI log)", in)
					if cmd.Bool("require-events") {
						fmt.Fprintf(std.err, "lcwrap: %s; --require-events makes this a failure\n", oneLine(msg))
						allValid = false
					} else {
						fmt.Fprintf(std.err, "lcwrap: %s\n", oneLine(msg))
					}
				}
				total.Lines += st.Lines
				total.Valid += st.Valid
				total.Invalid += st.Invalid
				total.Log += st.Log
			}
			if len(inputs) > 1 {
				fmt.Fprintf(std.out, "total: %s\n", summary(total, opts.Mixed))
			}
			if !allValid {
				return exitCode(1, "")
			}
			return nil
		},
	}
}

func validateOne(std stdio, name string, opts event.DecoderOptions, quiet, prefix bool) (event.Stats, bool, error) {
	var r io.Reader
	if name == "-" {
		r = std.in
	} else {
		f, err := os.Open(name)
		if err != nil {
			return event.Stats{}, false, err
		}
		defer f.Close()
		r = f
	}
	d := event.NewDecoder(r, opts)
	for {
		_, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return d.Stats(), false, err
		}
	}
	st := d.Stats()
	label := ""
	if prefix {
		label = termtext.Line(name) + ": "
	}
	fmt.Fprintf(std.out, "%s%s\n", label, summary(st, opts.Mixed))
	if !quiet {
		diags := d.Diagnostics()
		for _, dg := range diags {
			fmt.Fprintf(std.out, "  %s\n", termtext.Line(dg.String()))
		}
		if int64(len(diags)) < st.Invalid {
			fmt.Fprintf(std.out, "  (%d more problems not shown; at most %d are kept)\n", st.Invalid-int64(len(diags)), event.MaxDiagnostics)
		}
	}
	return st, st.Invalid == 0, nil
}

func summary(st event.Stats, mixed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d valid, %d invalid", st.Valid, st.Invalid)
	var parts []string
	for _, c := range event.Classes {
		if n := st.ByClass[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	if mixed {
		fmt.Fprintf(&b, ", %d log lines", st.Log)
	}
	return b.String()
}
