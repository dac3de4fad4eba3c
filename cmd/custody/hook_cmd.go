package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/agents"
	"github.com/custody-sh/custody/steps/resource"
	"github.com/custody-sh/custody/store"
)

// HookCmd groups the commands agents run from their hooks.
type HookCmd struct {
	SessionStart   HookSessionStartCmd   `cmd:"" help:"Take the lease of the worktree a session starts in (stdin: the agent's JSON payload)."`
	Heartbeat      HookHeartbeatCmd      `cmd:"" help:"Renew the session's lease (stdin: the agent's JSON payload)."`
	SessionEnd     HookSessionEndCmd     `cmd:"" help:"Release the session's lease (stdin: the agent's JSON payload)."`
	WorktreeCreate HookWorktreeCreateCmd `cmd:"" help:"Create a managed worktree named by the payload and print its path (Claude Code's WorktreeCreate)."`
	WorktreeRemove HookWorktreeRemoveCmd `cmd:"" help:"Finish the payload's worktree and remove it only when provably safe (Claude Code's WorktreeRemove)."`
}

// hookSession are the flags every session hook takes; they win over the
// payload's fields.
type hookSession struct {
	Session string `name:"session" placeholder:"ID" help:"The session id (default: the payload's session_id or session)."`
	Agent   string `name:"agent" placeholder:"NAME" help:"The agent's name, for the journal (default: the payload's agent)."`
}

// hookLeaseFlags are the flags of the hooks that take or renew a lease.
type hookLeaseFlags struct {
	Lease time.Duration `name:"lease" default:"30m" help:"How long the lease lasts without a heartbeat; once it expires, plan treats the tree as finished."`
}

// hookHelp is the part of every lease hook's help that says how it runs.
const hookHelp = `Reads the agent's JSON payload on stdin (at most 1 MiB; Claude Code's session_id,
cwd and hook_event_name, or {"session":…,"cwd":…,"agent":…}) and resolves the
worktree from cwd (the tree's path or below it) by reading git's files. The lease
changes in one transaction with a compare-and-swap on the record, and the change
is journaled. A hook never blocks an agent: it waits at most 2s for the state
file (session-end and heartbeat 1s, within Claude Code's 1.5s for SessionEnd
hooks; --lock-timeout sets another wait), always exits 0, and prints one
envelope {"hook_protocol":1,"ok":…,"outcome":…} on stdout; a refusal or an
error is also written on stderr, on one line, and, when the store can take it,
journaled as hook-error (a heartbeat's refusals only on stderr: it runs on
every prompt and tool call).

EXIT STATUS: 0 always.`

// HookSessionStartCmd takes a lease.
type HookSessionStartCmd struct {
	hookSession
	hookLeaseFlags
	Ensure bool `name:"ensure" help:"Then run the tree's resource ensure commands, when custody.toml declares resources."`
}

// Help is the long help of hook session-start.
func (HookSessionStartCmd) Help() string {
	return "Takes the lease of an active worktree for the session (the holder is the session id);\n" +
		"a live lease of another session refuses [lease-held]. " + hookHelp
}

// Run takes the lease.
func (c *HookSessionStartCmd) Run(a *App) error {
	return a.leaseHook("session-start", machine.LeaseAcquire, c.hookSession, c.Lease, c.Ensure)
}

// HookHeartbeatCmd renews a lease.
type HookHeartbeatCmd struct {
	hookSession
	hookLeaseFlags
}

// Help is the long help of hook heartbeat.
func (HookHeartbeatCmd) Help() string {
	return "Renews the session's lease (written again once a tenth of --lease has passed, so\n" +
		"frequent heartbeats cost a read), or takes it when none is live. " + hookHelp
}

// Run renews the lease.
func (c *HookHeartbeatCmd) Run(a *App) error {
	return a.leaseHook("heartbeat", machine.LeaseRenew, c.hookSession, c.Lease, false)
}

// HookSessionEndCmd releases a lease.
type HookSessionEndCmd struct {
	hookSession
}

// Help is the long help of hook session-end.
func (HookSessionEndCmd) Help() string {
	return "Releases the session's lease; a lease another session holds is left as it is. " + hookHelp
}

// Run releases the lease.
func (c *HookSessionEndCmd) Run(a *App) error {
	return a.leaseHook("session-end", machine.LeaseRelease, c.hookSession, 0, false)
}

// hookWait is how long a hook waits for the state file: hookLockTimeout
// for the hook, unless the command line names --lock-timeout.
func (a *App) hookWait(hook string) time.Duration {
	for _, arg := range a.args {
		if arg == "--" {
			break
		}
		if arg == "--lock-timeout" || strings.HasPrefix(arg, "--lock-timeout=") {
			return a.Globals.LockTimeout
		}
	}
	return hookLockTimeout(hook)
}

// hookLockTimeout is a hook's wait for the state file by default: 2s for
// session-start, 1s for session-end and heartbeat. Claude Code kills a
// SessionEnd hook after 1.5s (unless the entry names a longer timeout):
// session-end gives up within that, so it ends with its envelope and a
// line on stderr instead of being killed; a heartbeat runs on every prompt
// and tool call, and the next one renews what this one could not.
func hookLockTimeout(hook string) time.Duration {
	switch hook {
	case "session-end", "heartbeat":
		return time.Second
	}
	return 2 * time.Second
}

// leaseHook runs one lease hook and prints its envelope.
func (a *App) leaseHook(hook string, op machine.LeaseOp, flags hookSession, dur time.Duration, ensure bool) error {
	env := hookEnvelope{Hook: hook}
	defer a.hookDone(&env)
	if op != machine.LeaseRelease && dur < time.Second {
		refuseHook(&env, &machine.Refusal{Code: machine.CodeUsage, Retry: machine.Command("custody", "hook", hook, "--help"),
			Message: fmt.Sprintf("%s: --lease %s is not a duration a lease can last; nothing was changed", machine.Command("custody", "hook", hook), dur)})
		return nil
	}
	p, err := readHookPayload(os.Stdin)
	if err != nil {
		refuseHook(&env, payloadRefusal(hook, err))
		a.journalHere(&env, flags)
		return nil
	}
	req := machine.LeaseRequest{Op: op, Session: firstOf(flags.Session, p.Session), Now: clock()().UTC(), Duration: dur}
	agent := firstOf(flags.Agent, p.Agent)
	env.Session = req.Session
	if err := machine.ValidSession(req.Session); err != nil {
		refuseHook(&env, payloadRefusal(hook, err))
		a.journalHere(&env, flags)
		return nil
	}
	dir := a.Dir
	if p.Cwd != "" {
		dir = a.path(p.Cwd)
	}
	tree, err := agents.LocateHookTree(dir)
	if err != nil {
		failHook(&env, a, err)
		return nil
	}
	env.Path = tree.Path
	a.statePath = tree.StatePath()
	actor := hookActor(agent, req.Session)
	res, st, refusal, err := agents.ChangeHookLease(a.Ctx, agents.HookLease{Hook: hook, Tree: tree, Request: req, Agent: agent, Actor: actor}, a.hookWait(hook))
	env.ID, env.Lease = res.Record.ID, res.Lease
	switch {
	case err != nil:
		failHook(&env, a, err)
	case refusal != nil:
		refuseHook(&env, refusal)
	default:
		env.OK, env.Outcome = true, string(res.Decision.Outcome)
	}
	if env.Refusal != nil || env.Error != nil {
		journalHook(&env, st, res.Record.ID, actor, req.Now)
	}
	if ensure && env.OK && op == machine.LeaseAcquire {
		env.Ensure = a.hookEnsure(tree, res.Record.ID)
	}
	return nil
}

// journalHere journals a hook's refusal when the hook could not read its
// payload: in the store of the tree the hook runs in, if it runs in one
// (else the refusal is on stderr alone).
func (a *App) journalHere(env *hookEnvelope, flags hookSession) {
	tree, err := agents.LocateHookTree(a.Dir)
	if err != nil {
		return
	}
	env.Path = tree.Path
	st, err := store.OpenContext(a.Ctx, tree.StatePath(), a.hookWait(env.Hook), false)
	if err != nil {
		return
	}
	journalHook(env, st, "", hookActor(flags.Agent, env.Session), clock()().UTC())
}

// hookEnsure runs the tree's ensure commands when custody.toml exists.
func (a *App) hookEnsure(tree agents.HookTree, id string) *hookEnsureResult {
	if _, err := os.Lstat(filepath.Join(tree.Repo.MainCheckout, "custody.toml")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	out := &hookEnsureResult{}
	a.Dir = tree.Path
	e, err := a.env(false)
	if err == nil {
		out.Resources, err = resource.Ensure(a.Ctx, e, id)
	}
	if err != nil {
		b := describeIn(err, a.invocation())
		out.Error = &b
		writeRefusal(a.Stderr, "custody hook session-start: resource ensure", &machine.Refusal{Code: machine.Code(b.Code), Message: b.Message, Retry: b.Retry})
	}
	for _, o := range out.Resources {
		if o.Refusal != nil {
			writeRefusal(a.Stderr, "custody hook session-start: "+string(o.Outcome)+" "+o.ID, o.Refusal)
		}
	}
	return out
}

// payloadRefusal is the refusal of a payload a hook cannot use.
func payloadRefusal(hook string, err error) *machine.Refusal {
	return &machine.Refusal{Code: machine.CodeHookPayloadInvalid, Retry: machine.Command("custody", "hook", hook, "--help"),
		Message: fmt.Sprintf("%s: %v; nothing was changed (the agent's hook sends a JSON object with session_id and cwd on stdin)", machine.Command("custody", "hook", hook), err)}
}

// hookActor names who acts in a hook's journal entries.
func hookActor(agent, session string) string {
	if agent == "" {
		agent = "agent"
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s session %s@%s", agent, machine.EscapeControl(session), host)
}

// firstOf returns the first non-empty string.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
