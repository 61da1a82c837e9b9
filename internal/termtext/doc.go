// Package termtext makes text that came from lcwrap's input (a journal, a
// stream, a CI log, a file name) safe to print on a terminal. It is the one
// place that decides which characters a terminal would act on instead of
// showing, and how they are shown instead.
//
// # What it promises
//
// What Line (one line) and Text (several: newlines kept) return holds no
// character a terminal acts on: no C0 control,
// no DEL, no C1 control, no byte that is not UTF-8. Layout controls (tab,
// newline, carriage return, vertical tab, form feed) become a space; every
// other one is written out visibly as a \u escape (\u001b, \u009b), and
// each byte that is not UTF-8 as \xNN. The \u escapes are JSON's own, so a
// JSON document passed through Line or Text decodes to the same value. Text with none
// of these characters comes back unchanged (and without an allocation).
// Clean, Cut, CutMiddle, Shorten and Blank are the one set of helpers
// that tidy and shorten such text for a line, a cell or a record.
//
// # What it refuses to claim
//
// It makes text safe to print, not true or complete: it neither redacts
// (redact does) nor decides what a line means. A backslash is left as it
// is, so the escapes are for people to read, not for parsing back.
// Characters that change how text reads without driving the terminal
// (bidirectional controls) and HTML are not its concern yet.
package termtext
