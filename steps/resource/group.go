package resource

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
)

// groupGrace is how long a leftover command's group may take to exit after
// SIGTERM before it is killed, and again after SIGKILL before custody
// gives up on it.
const groupGrace = 2 * time.Second

// recordGroup returns the runner's OnStart hook for a command run under
// r's intent: it commits the started command's process group (and its
// leader's start time) into the intent before the command is waited for,
// and keeps *r in step with the store. A failed commit ends the command.
func recordGroup(ctx context.Context, e *steps.Env, r *machine.Resource) func(pid int) error {
	return func(pid int) error {
		in := *r.Intent
		in.Group = &machine.Holder{PID: pid, Host: e.Holder.Host, Start: hostio.ProcessStart(pid)}
		next, err := fireResource(ctx, e, *r, machine.TriggerStarted, machine.ResourceFiring{Intent: &in}, fmt.Sprintf("started (process group %d)", pid))
		if err != nil {
			return err
		}
		*r = next
		return nil
	}
}

// groupAlive reports whether the process group g recorded in an intent may
// still run: its leader is alive with the recorded start time, or, the
// leader gone, some member is left (a group id is not reused while the
// group has members). A pid that now names another process means the
// group is gone.
func groupAlive(g machine.Holder) bool {
	if g.PID <= 1 {
		return false
	}
	if ok, _ := hostio.ProcessExists(g.PID); ok {
		if g.Start != 0 && hostio.ProcessStart(g.PID) != g.Start {
			return false
		}
	}
	return hostio.SignalGroup(g.PID, 0) == nil
}

// endGroup ends the process group recorded in r's intent when a command of
// a killed custody still runs in it: SIGTERM, groupGrace, SIGKILL, then
// at most groupGrace more for it to be gone. It does nothing when no group
// is recorded, the group has ended, or it was recorded on another host.
// It returns an error when the group outlives all that: the caller must
// not act alongside it.
func endGroup(e *steps.Env, r machine.Resource) error { return endGroupOn(e.Holder.Host, r) }

// endGroupOn is endGroup on host.
func endGroupOn(host string, r machine.Resource) error {
	f := machine.GroupFacts{Host: host}
	if r.Intent != nil && r.Intent.Group != nil {
		f.Alive = groupAlive(*r.Intent.Group)
	}
	if machine.DecideGroup(r.Intent, f) != machine.GroupEnd {
		return nil
	}
	g := *r.Intent.Group
	gone := func(d time.Duration) bool {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if !groupAlive(g) {
				return true
			}
		}
		return !groupAlive(g)
	}
	_ = hostio.SignalGroup(g.PID, syscall.SIGTERM)
	if gone(groupGrace) {
		return nil
	}
	_ = hostio.SignalGroup(g.PID, syscall.SIGKILL)
	if gone(groupGrace) {
		return nil
	}
	return fmt.Errorf("the %s command of %s that an interrupted custody started (process group %d) is still running after SIGKILL; custody will not run another alongside it", r.Intent.Kind, r.ID, g.PID)
}
