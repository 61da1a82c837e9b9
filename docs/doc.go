// Package docs holds lcwrap's documentation as Markdown: README.md at the
// repository root is the front door, each longer text is one file here.
// Its tests check that every relative link (and #anchor) in them
// resolves, that the generated parts match their source (the exit-status
// table in run.md: internal/exitcode), and that the import graph keeps
// the layers of design.md.
package docs

//go:generate go test -run ^TestExitCodeTable$ . -args -update
