// Package viewtest builds the scenes the tests of view, its follower, the
// TUI and the report look at: a journal holding an agent run (launched
// process, session, sub-agents, one of them waiting), a retried build, a
// failed test run, an adopted process and a stale job. It is test support,
// not part of lcwrap.
package viewtest
