package steps

import (
	"os"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// Self returns the holder that identifies this process in intents.
func Self() machine.Holder {
	host, _ := os.Hostname()
	return machine.Holder{PID: os.Getpid(), Host: host, Start: procStart(os.Getpid())}
}

// procStart returns a token of when a process started (see
// observe.ProcessStart), or 0 where that cannot be read.
func procStart(pid int) uint64 { return hostio.ProcessStart(pid) }

// HolderAlive reports whether the process that committed an intent may still
// be acting on it. A holder on another host, or one whose liveness cannot be
// read, counts as alive: custody never steals an intent it cannot prove
// abandoned.
func HolderAlive(h machine.Holder, self machine.Holder) bool {
	if h.PID == 0 {
		return false
	}
	if h.Host != self.Host {
		return true
	}
	if h.PID == self.PID && h.Start == self.Start {
		return false
	}
	if exists, err := hostio.ProcessExists(h.PID); err != nil || !exists {
		return err != nil
	}
	return h.Start == 0 || procStart(h.PID) == h.Start
}
