// Package doccapture keeps the captures in lcwrap's documentation true:
// a block of a Markdown file marked
//
//	<!-- capture: NAME -->
//
// on the line before it (a fenced block, or one indented four spaces) is
// the output of a real run, and the test that makes that run hands its
// transcript to Check. Check compares the two with what changes from run
// to run masked (times, durations, numbers, process and boot ids, source
// epochs, temporary paths, the host, the executable's path, and an
// adopted process's exit check, which races its parent's wait) and
// column padding ignored; run with
// -update, it writes the transcript into the file instead.
//
// It promises that a capture that no longer matches what the binary
// prints fails a test, layout and words included. It does not claim the
// masked values were those of one run, nor that prose around a capture is
// true.
package doccapture
