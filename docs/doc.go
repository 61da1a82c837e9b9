// Package docs holds lcwrap's documentation as Markdown: README.md at the
// repository root is the front door, each longer text is one file here.
// Its test checks that every relative link (and #anchor) in them resolves.
package docs
