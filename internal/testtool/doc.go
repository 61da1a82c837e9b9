// Package testtool is for tests that need a program on PATH (jq, git,
// systemd-notify): locally a missing one skips the test, naming what to
// install; under CI (CI=true) it fails it, because a skip there would pass
// a suite that did not run. Buffer is a stream several goroutines may
// write to and a test reads back. Offline re-runs a test in a user and
// network namespace whose only interface is loopback, the proof that what
// it starts reaches nothing but 127.0.0.1 (passing -update on). Lcwrap
// and Companion build lcwrap and its companion programs once per test
// process; Chromium runs the headless browser on a local file;
// Eventually and Poll wait on a condition with a deadline. It promises
// nothing else.
package testtool
