package exitcode

import (
	"fmt"
	"strings"
)

// The exit statuses lcwrap gives of its own. A run's child's code passes
// through otherwise (Child, Signal).
const (
	OK     = 0 // the command did what it was asked (a run: the child's own 0)
	Failed = 1 // the command failed; each command's help says how
	// Refused: the command refused, or could not record, what it was
	// asked; nothing was appended or sent (reconcile, cancel).
	Refused           = 2
	CancelNoAuthority = 3 // cancel: no verified authority over the child
	CancelNoSuchChild = 4 // cancel: no such child in the journal
	CancelNotRunning  = 5 // cancel: the child has ended, or not started
	CancelWrapperGone = 6 // cancel: the child's wrapper is gone
	// EmitUnknown: emit cannot tell whether its line was written (a
	// retry may duplicate it).
	EmitUnknown = 121
	// Unmet: wait's child ended without meeting the condition.
	Unmet = 122
	// EndUnknown: the end of the child is unknown to lcwrap: a run whose
	// child's exit status could not be read (recorded as lost); wait
	// --exit-code for a child whose exit lcwrap does not know.
	EndUnknown    = 123
	Timeout       = 124 // lcwrap's own timeout ran out (run: it cancelled the child)
	Usage         = 125 // lcwrap's own usage error: nothing was started or written
	NotExecutable = 126 // the command was found but could not be executed
	NotFound      = 127 // the command was not found
	SignalBase    = 128 // 128+N: a death by signal N, as a shell reports it
)

// Codes of the rows that stand for many codes (Status.Code).
const (
	codeChild  = -1 // "N": the child's own code
	codeSignal = SignalBase
)

// Status is one row of the table: a code (or a family of codes), its name
// and meaning, and the commands that give it.
type Status struct {
	Code    int    // the code; -1 for the child's own code N, 128 for 128+N
	Shown   string // how help and docs write it ("0", "N", "128+N")
	Name    string // a short stable name ("usage", "end-unknown")
	Meaning string // what it means, whichever command gives it
	Uses    []Use  // the commands that give it, in help order
}

// Use is one command that gives a status, in that command's words.
type Use struct {
	Command string // the full command name ("lcwrap run", "lcwrap journal verify")
	Meaning string // what the code means there; "" for the row's Short
	Shown   string // how this command writes the code, when not the row's ("130, 143")
	// Reserved marks a use that an open issue has chosen and no command
	// gives yet: docs list it, help does not.
	Reserved bool
}

// Run is the command name of a run, in the table: "lcwrap CMD" and
// "lcwrap run CMD" give the same statuses.
const Run = "lcwrap run"

// usage is the words most commands use for Usage.
const usage = "usage error"

// Table is every exit status, in increasing order of code (the child's
// own N first). TestTable holds it to the constants above.
var Table = []Status{
	{Code: codeChild, Shown: "N", Name: "child", Meaning: "a run's child exited with N: lcwrap exits with the child's own code (an exit code is not task success)", Uses: []Use{
		{Command: Run, Meaning: "the command's own exit code (an exit code is not task success)"},
		{Command: "lcwrap wait", Meaning: "with --exit-code: the child's own exit code, as its terminal event records it"},
	}},
	{Code: OK, Shown: "0", Name: "ok", Meaning: "the command did what it was asked (for a run, the child's own 0, as N)", Uses: []Use{
		{Command: "lcwrap adopt", Meaning: "every process was observed to its end"},
		{Command: "lcwrap status", Meaning: "shown"},
		{Command: "lcwrap reconcile", Meaning: "applied (even if nothing changed)"},
		{Command: "lcwrap snapshot", Meaning: "printed (complete or not)"},
		{Command: "lcwrap cancel", Meaning: "sent (with --wait: the child ended; its terminal state is printed)"},
		{Command: "lcwrap tail", Meaning: "printed (with --follow: interrupted)"},
		{Command: "lcwrap emit", Meaning: "every requested sink took the event"},
		{Command: "lcwrap journal", Meaning: "done"},
		{Command: "lcwrap journal path", Meaning: "printed"},
		{Command: "lcwrap journal verify", Meaning: "clean"},
		{Command: "lcwrap journal repair", Meaning: "repaired, or nothing to repair"},
		{Command: "lcwrap journal unlock", Meaning: "the lock was broken"},
		{Command: "lcwrap validate", Meaning: "every line is valid (and, with --require-events, each input holds an event)"},
		{Command: "lcwrap top", Meaning: "quit (q, ^C, SIGTERM)"},
		{Command: "lcwrap serve", Meaning: "stopped (^C, SIGTERM)"},
		{Command: "lcwrap report", Meaning: "written"},
		{Command: "lcwrap hook claude-code", Meaning: "always, whatever happened to the payload (a hook never fails its agent)"},
		{Command: "lcwrap hook codex", Meaning: "always, whatever happened to the payload (a hook never fails its agent)"},
		{Command: "lcwrap hook gemini", Meaning: "always, whatever happened to the payload (a hook never fails its agent)"},
		{Command: "lcwrap hook copilot", Meaning: "always, whatever happened to the payload (a hook never fails its agent)"},
		{Command: "lcwrap help", Meaning: "shown"},
		{Command: "lcwrap version", Meaning: "printed"},
		{Command: "lcwrap wait", Meaning: "every child met the condition (--any: one did); with --exit-code, the child's own 0"},
		{Command: "lcwrap watch", Meaning: "interrupted (^C, SIGTERM); a command's failure is reported, never fatal"},
	}},
	{Code: Failed, Shown: "1", Name: "failed", Meaning: "the command failed; what failed is its own (one line on stderr names it), never the child's", Uses: []Use{
		{Command: "lcwrap adopt", Meaning: "a pid, or what --agent NAME was asked to follow, could not be adopted (the others are still observed)"},
		{Command: "lcwrap status", Meaning: "the journal or --file is missing or cannot be read, or the journal cannot be appended to"},
		{Command: "lcwrap reconcile", Meaning: "the journal cannot be read or appended to"},
		{Command: "lcwrap snapshot", Meaning: "the journal cannot be read"},
		{Command: "lcwrap cancel", Meaning: "--wait ran out: sent, not ended yet"},
		{Command: "lcwrap tail", Meaning: "the journal is missing, a bad line stops it (the message names it), or --child has no event"},
		{Command: "lcwrap emit", Meaning: "a sink failed (the message names it)"},
		{Command: "lcwrap journal", Meaning: "see each command's help"},
		{Command: "lcwrap journal verify", Meaning: "a problem (the first one is named), or no journal"},
		{Command: "lcwrap journal repair", Meaning: "it could not be repaired, or no journal"},
		{Command: "lcwrap validate", Meaning: "an invalid line, an input with no event under --require-events, or an input that cannot be read"},
		{Command: "lcwrap top", Meaning: "lcwrap-top cannot be found or run"},
		{Command: "lcwrap serve", Meaning: "lcwrap-serve cannot be found or run, it cannot listen, or the token file cannot be read or made"},
		{Command: "lcwrap report", Meaning: "the input cannot be read, or the file cannot be written"},
		{Command: "lcwrap hook claude-code", Meaning: "--print-settings only: lcwrap cannot tell its own path"},
		{Command: "lcwrap hook codex", Meaning: "--print-config only: lcwrap cannot tell its own path"},
		{Command: "lcwrap hook gemini", Meaning: "--print-settings only: lcwrap cannot tell its own path"},
		{Command: "lcwrap hook copilot", Meaning: "--print-settings only: lcwrap cannot tell its own path"},
		{Command: "lcwrap journal unlock", Meaning: "not broken: no lock, another token, or an owner alive"},
		{Command: "lcwrap wait", Meaning: "the journal or --fleet cannot be read, or the selectors pick no child"},
		{Command: "lcwrap watch", Meaning: "the journal, --fleet or the cursor cannot be read, or the cursor is another input's"},
	}},
	{Code: Refused, Shown: "2", Name: "refused", Meaning: "the command refused, or could not record, what it was asked: nothing was appended or sent", Uses: []Use{
		{Command: "lcwrap reconcile", Meaning: "the snapshot is refused: nothing was appended"},
		{Command: "lcwrap cancel", Meaning: "the journal cannot be read, or the request cannot be recorded"},
	}},
	{Code: CancelNoAuthority, Shown: "3", Name: "no-authority", Meaning: "cancel: lcwrap holds no verified authority over the child; nothing was sent", Uses: []Use{
		{Command: "lcwrap cancel", Meaning: "no authority: an adopted or external child, or a wrapper on another host or that cannot be verified"},
	}},
	{Code: CancelNoSuchChild, Shown: "4", Name: "no-such-child", Meaning: "cancel: no such child in the journal; nothing was sent", Uses: []Use{
		{Command: "lcwrap cancel", Meaning: "no such child"},
	}},
	{Code: CancelNotRunning, Shown: "5", Name: "not-running", Meaning: "cancel: the child has already ended, or has not started yet; nothing was sent", Uses: []Use{
		{Command: "lcwrap cancel", Meaning: "it has already ended, or has not started yet"},
	}},
	{Code: CancelWrapperGone, Shown: "6", Name: "wrapper-gone", Meaning: "cancel: the child's wrapper is gone, so the child may be lost; nothing was sent", Uses: []Use{
		{Command: "lcwrap cancel", Meaning: "its wrapper is gone: the child may be lost ('lcwrap status --reconcile')"},
	}},
	{Code: EmitUnknown, Shown: "121", Name: "write-unknown", Meaning: "emit cannot tell whether its line was written (a foreign writer, an error after the write): a retry may duplicate it", Uses: []Use{
		{Command: "lcwrap emit", Meaning: "unknown whether the event was written to the journal: check it before a retry (do not retry blindly)"},
	}},
	{Code: Unmet, Shown: "122", Name: "unmet", Meaning: "wait: a child ended without meeting the condition (--for waiting on a child that completed)", Uses: []Use{
		{Command: "lcwrap wait", Meaning: "a child ended without meeting the condition (--any: every child did)"},
	}},
	{Code: EndUnknown, Shown: "123", Name: "end-unknown", Meaning: "the child's end is unknown to lcwrap: a run whose child's exit status could not be read (recorded lost); wait --exit-code for a child whose exit lcwrap does not know (adopted, lost); never 0 for an unknown", Uses: []Use{
		{Command: Run, Meaning: "the command's exit status could not be read: its end is unknown (recorded as lost)"},
		{Command: "lcwrap wait", Meaning: "with --exit-code: the child's exit is unknown (adopted, lost)"},
	}},
	{Code: Timeout, Shown: "124", Name: "timeout", Meaning: "lcwrap's own timeout ran out; as with timeout(1), a child's own 124 looks the same where its code passes through (a run, wait --exit-code): the terminal event tells them apart", Uses: []Use{
		{Command: Run, Meaning: "--timeout or --ready-timeout cancelled it"},
		{Command: "lcwrap wait", Meaning: "--timeout ran out (with --exit-code, a child's own 124 looks the same: --json tells them apart)"},
	}},
	{Code: Usage, Shown: "125", Name: "usage", Meaning: "lcwrap's own usage error (a bad flag or argument): nothing was started or written, one line on stderr says what to do", Uses: []Use{
		{Command: Run, Meaning: "lcwrap's own usage error: nothing was started, no events"},
		{Command: "lcwrap adopt"},
		{Command: "lcwrap status"},
		{Command: "lcwrap reconcile"},
		{Command: "lcwrap snapshot"},
		{Command: "lcwrap cancel"},
		{Command: "lcwrap tail"},
		{Command: "lcwrap emit", Meaning: "a bad flag or event: nothing was written"},
		{Command: "lcwrap journal"},
		{Command: "lcwrap journal path", Meaning: "no path can be resolved (no $HOME), or a usage error"},
		{Command: "lcwrap journal verify"},
		{Command: "lcwrap journal repair"},
		{Command: "lcwrap validate"},
		{Command: "lcwrap top", Meaning: "usage error, or standard output is not a terminal"},
		{Command: "lcwrap serve"},
		{Command: "lcwrap report"},
		{Command: "lcwrap hook", Meaning: "usage error (no agent named)"},
		{Command: "lcwrap hook claude-code"},
		{Command: "lcwrap hook codex"},
		{Command: "lcwrap hook gemini"},
		{Command: "lcwrap hook copilot"},
		{Command: "lcwrap journal unlock"},
		{Command: "lcwrap help", Meaning: "no such command"},
		{Command: "lcwrap version"},
		{Command: "lcwrap wait"},
		{Command: "lcwrap watch"},
	}},
	{Code: NotExecutable, Shown: "126", Name: "not-executable", Meaning: "a run's command was found but could not be executed: no process started", Uses: []Use{
		{Command: Run, Meaning: "the command could not be executed"},
	}},
	{Code: NotFound, Shown: "127", Name: "not-found", Meaning: "a run's command was not found: no process started", Uses: []Use{
		{Command: Run, Meaning: "the command was not found"},
	}},
	{Code: codeSignal, Shown: "128+N", Name: "signal", Meaning: "a death by signal N, as a shell reports it: a run's child killed by N, or lcwrap adopt stopped by N", Uses: []Use{
		{Command: Run, Meaning: "a signal N killed the command"},
		{Command: "lcwrap adopt", Shown: "130, 143", Meaning: "lcwrap adopt got SIGINT or SIGTERM (the processes are untouched)"},
		{Command: "lcwrap wait", Meaning: "with --exit-code: a signal N killed the child (and 130, 143: wait itself got SIGINT or SIGTERM)"},
	}},
}

// Row is one line of a command's exit status in its help.
type Row struct{ Code, Meaning string }

// For returns the exit status of one command (its full name; "lcwrap"
// is a run), in table order, without reserved uses.
func For(command string) []Row {
	if command == "lcwrap" {
		command = Run
	}
	var rows []Row
	for _, s := range Table {
		for _, u := range s.Uses {
			if u.Command != command || u.Reserved {
				continue
			}
			r := Row{Code: s.Shown, Meaning: u.Meaning}
			if u.Shown != "" {
				r.Code = u.Shown
			}
			if r.Meaning == "" {
				r.Meaning = usage
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// Commands lists the commands that give s, as docs write them: a
// reserved use is marked so.
func (s Status) Commands() string {
	var names []string
	for _, u := range s.Uses {
		n := strings.TrimPrefix(u.Command, "lcwrap ")
		if u.Command == Run {
			n = "run"
		}
		if u.Shown != "" {
			n += " (" + u.Shown + ")"
		}
		if u.Reserved {
			n += " (reserved)"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// Markdown is the table as docs/run.md shows it: code, name, meaning and
// the commands that give it.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| code | name | meaning | commands |\n|---|---|---|---|\n")
	for _, s := range Table {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", s.Shown, s.Name, s.Meaning, s.Commands())
	}
	return b.String()
}
