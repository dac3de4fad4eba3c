//go:build unix

package resource

import (
	"github.com/custody-sh/custody/observe/hostio"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// startGroup starts `sleep 30` as the leader of its own process group.
func startGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "30")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() })
	return c
}

// TestEndGroup: a group recorded in an intent that still runs is ended;
// one whose leader's start time does not match (the pid names another
// process now) is gone and is not signalled; another host's group is left.
func TestEndGroup(t *testing.T) {
	t.Parallel()
	e := &steps.Env{Holder: machine.Holder{PID: 1, Host: "here"}}
	entry := func(g machine.Holder) machine.Resource {
		return machine.Resource{ID: "x/db", Intent: &machine.ResourceIntent{Kind: machine.IntentResourceCreate, Group: &g}}
	}

	c := startGroup(t)
	g := machine.Holder{PID: c.Process.Pid, Host: "here", Start: hostio.ProcessStart(c.Process.Pid)}
	if !groupAlive(g) {
		t.Fatalf("a running group %d is not alive", g.PID)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	if err := endGroup(e, entry(g)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("endGroup returned but the group %d still runs", g.PID)
	}

	other := startGroup(t)
	reused := machine.Holder{PID: other.Process.Pid, Host: "here", Start: hostio.ProcessStart(other.Process.Pid) + 1}
	if groupAlive(reused) {
		t.Errorf("a pid with another start time counts as the recorded group")
	}
	if err := endGroup(e, entry(reused)); err != nil {
		t.Fatal(err)
	}
	remote := machine.Holder{PID: other.Process.Pid, Host: "elsewhere", Start: hostio.ProcessStart(other.Process.Pid)}
	if err := endGroup(e, entry(remote)); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(other.Process.Pid, 0) != nil {
		t.Errorf("endGroup signalled a process that is not the recorded group")
	}
}
