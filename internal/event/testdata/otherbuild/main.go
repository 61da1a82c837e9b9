// Command otherbuild is the procid tests' stand-in for the other build of
// lcwrap (built with or without the lcwrap_gopsutil tag, whichever the
// test binary is not): it prints its own identity as lcwrap records it,
// then the created event lcwrap run would write with it as the wrapper,
// then answers Check for each identity it reads, one JSON line each, until
// its stdin ends.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

func main() {
	self, err := event.SelfIdentity()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, _ := json.Marshal(self)
	fmt.Printf("%s %s\n", event.ProcBackend, b)
	em := emit.New(emit.Options{}, emit.NewWriterSink("stdout", os.Stdout))
	c := em.Child("wrapped", event.Lineage{}, event.Launched(true))
	if _, err := c.Emit(emit.Spec{Kind: event.KindCreated, State: event.StateCreated,
		Details: event.Created{Command: event.Command{"true"}, Wrapper: &self, Profile: "launched"}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var id event.Identity
		if err := json.Unmarshal(in.Bytes(), &id); err != nil {
			fmt.Println("error", err)
			continue
		}
		fmt.Println(event.CheckIdentity(event.System, id).Status)
	}
}
