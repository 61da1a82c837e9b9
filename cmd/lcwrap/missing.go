package main

import "fmt"

// missingError is a journal or --file stream that does not exist. status,
// status --file and tail treat it alike: one line saying what is missing
// and what to do, exit status 1 (status still shows that it knows nothing).
type missingError struct{ exitError }

func (e *missingError) Unwrap() error { return &e.exitError }

// noJournal is the answer to a journal that does not exist.
func noJournal(path string) error {
	return &missingError{exitError{code: 1, msg: fmt.Sprintf("no journal at %s: nothing was recorded there yet; run a command under lcwrap first ('lcwrap -- CMD'), or name the journal with --journal PATH or $LCWRAP_JOURNAL", path)}}
}

// noStream is the answer to a --file that does not exist.
func noStream(path string) error {
	return &missingError{exitError{code: 1, msg: fmt.Sprintf("no file at %s: nothing to read; check the path given to --file (a journal, a CI log with --mixed, or - for standard input)", path)}}
}
