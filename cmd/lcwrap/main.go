// Command lcwrap wraps or adopts a process and reports its lifecycle as
// schema-v1 JSON Lines. main only runs run and exits with its result, so
// that every deferred cleanup below it has already happened.
package main

import "os"

func main() { os.Exit(run(os.Args)) }
