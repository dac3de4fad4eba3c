package steps

import (
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// Self returns the holder that identifies this process in intents: its
// pid, host and start, and its command line for people to read.
func Self() machine.Holder {
	host, _ := os.Hostname()
	return machine.Holder{PID: os.Getpid(), Host: host, Start: procStart(os.Getpid()), Command: selfCommand()}
}

// selfCommand is this process's command line as a holder says it: the
// program's base name, then its arguments, each shown escaped (the holder
// note's form, machine.HolderCommand).
func selfCommand() string {
	if len(os.Args) == 0 {
		return ""
	}
	return machine.HolderCommand(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...))
}

// procStart returns a token of when a process started (see
// observe.ProcessStart), or 0 where that cannot be read.
func procStart(pid int) uint64 { return hostio.ProcessStart(pid) }

// HolderAlive reports whether the process that committed an intent may still
// be acting on it. A holder on another host, or one whose liveness cannot be
// read, counts as alive: custody never steals an intent it cannot prove
// abandoned.
func HolderAlive(h machine.Holder, self machine.Holder) bool {
	return Liveness(h, self) != machine.HolderGone
}

// Liveness says what custody can tell of holder h from this process
// (self): gone (dead, or this very process), here (another process on this
// host, alive with the start it recorded: its work is in progress), or
// elsewhere (another host, or liveness that cannot be read).
func Liveness(h machine.Holder, self machine.Holder) machine.HolderLiveness {
	if h.PID == 0 {
		return machine.HolderGone
	}
	if h.Host != self.Host {
		return machine.HolderElsewhere
	}
	if h.PID == self.PID && h.Start == self.Start {
		return machine.HolderGone
	}
	exists, err := hostio.ProcessExists(h.PID)
	switch {
	case err != nil:
		return machine.HolderElsewhere
	case !exists:
		return machine.HolderGone
	case h.Start != 0 && procStart(h.PID) != h.Start:
		return machine.HolderGone // the pid was reused
	}
	return machine.HolderHere
}
