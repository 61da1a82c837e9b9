#!/bin/sh
# server.sh NAME: plays a long-running server for run.sh. It runs until
# SIGTERM, then exits 7; every catchable signal it receives is appended
# to signals.log as "NAME SIGNAL", so run.sh can show who signalled it.
# (Started as a background job of a script, it ignores SIGINT and SIGQUIT
# from the start, as every such job does.)
name=$1
for s in HUP USR1 USR2 ALRM PIPE; do
	trap "echo '$name $s' >>signals.log" $s
done
trap "echo '$name TERM' >>signals.log; exit 7" TERM
while :; do sleep 0.2; done
