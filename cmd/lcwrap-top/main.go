// Command lcwrap-top is `lcwrap top`: the full-screen live view of a
// journal. `lcwrap top` runs it (it is looked for beside lcwrap, then in
// $PATH); it is a program of its own so that the TUI library's start-up
// is never paid by `lcwrap -- CMD` (docs/view.md).
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }
