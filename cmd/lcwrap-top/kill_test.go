package main

import "syscall"

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
