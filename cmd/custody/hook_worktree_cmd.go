package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/agents"
	"github.com/custody-sh/custody/store"
)

// HookWorktreeCreateCmd is custody new for an agent's WorktreeCreate hook.
type HookWorktreeCreateCmd struct {
	hookSession
	hookLeaseFlags
	Name string `name:"name" placeholder:"NAME" help:"The worktree's name (default: the payload's name or worktree_name)."`
	From string `name:"from" placeholder:"REV" help:"Start from REV (default: the main checkout's HEAD)."`
}

// Help is the long help of hook worktree-create.
func (HookWorktreeCreateCmd) Help() string {
	return `Creates a managed worktree as custody new does, named by the payload's name (Claude
Code's WorktreeCreate sends {"name":…,"cwd":…,"session_id":…}), and prints only
its path on stdout, which is what the agent reads. When the payload names a
session, the new tree is leased to it at once.

Unlike the session hooks it fails loudly: the agent must not work in a tree that
was not made.

EXIT STATUS: 0 created, 1 error (nothing is left half made), 3 interrupted (custody resume settles it).`
}

// Run creates the worktree.
func (c *HookWorktreeCreateCmd) Run(a *App) error {
	p, err := readHookPayload(os.Stdin)
	if err != nil {
		return payloadRefusal("worktree-create", err)
	}
	name := firstOf(c.Name, p.Name)
	if strings.TrimSpace(name) == "" {
		return payloadRefusal("worktree-create", fmt.Errorf("no worktree name (name in the payload, or --name)"))
	}
	if p.Cwd != "" {
		a.Dir = a.path(p.Cwd)
	}
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := steps.New(a.Ctx, e, name, c.From, a.Dir)
	if err != nil {
		return err
	}
	session, agent := firstOf(c.Session, p.Session), firstOf(c.Agent, p.Agent)
	var lease error
	if res.Interrupted == "" && machine.ValidSession(session) == nil {
		req := machine.LeaseRequest{Op: machine.LeaseAcquire, Session: session, Now: e.Now().UTC(), Duration: c.Lease}
		var lr store.LeaseResult
		lr, lease = e.Store.ChangeLease(store.LeaseChange{Path: res.Path, Key: res.ID, Request: req,
			Hook: "worktree-create", Agent: agent, Actor: hookActor(agent, session)})
		switch {
		case lease != nil:
		case !lr.Found:
			lease = fmt.Errorf("custody keeps no live record of %s", res.Path)
		case lr.Decision.Refusal != nil:
			lease = lr.Decision.Refusal
		}
	}
	a.done(res, func(w io.Writer) {
		if res.Interrupted != "" {
			fmt.Fprintf(a.Stderr, "%s\n\tnext: custody resume\n", res.Interrupted)
			return
		}
		if res.Hook != "" {
			fmt.Fprintf(a.Stderr, "custody hook worktree-create: %s is created and active at %s, but %s\n", res.ID, machine.QuoteArg(res.Path), strings.ReplaceAll(res.Hook, "\n", "\n\t"))
		}
		if lease != nil {
			fmt.Fprintf(a.Stderr, "custody hook worktree-create: %s is created, but its lease for session %s was not taken: %v\n", res.ID, machine.EscapeControl(session), lease)
		}
		fmt.Fprintln(w, res.Path)
	})
	return nil
}

// HookWorktreeRemoveCmd retires a tree for an agent's WorktreeRemove hook.
type HookWorktreeRemoveCmd struct {
	hookSession
	Path string `name:"path" placeholder:"DIR" help:"The worktree (default: the payload's worktree_path, else its cwd)."`
}

// Help is the long help of hook worktree-remove.
func (HookWorktreeRemoveCmd) Help() string {
	return `Retires the payload's worktree (Claude Code's WorktreeRemove sends
{"worktree_path":…,"session_id":…}): releases the session's lease, finishes
the tree, plans it alone and applies that plan, so the tree is removed only
with a proof, exactly as custody plan and apply would. The processes that ran
the hook (its shell and the agent above it, while they stand in the tree) do
not count as using the tree; any file they hold open in it, and every other
process, still does. A tree that is not provably safe is kept, with every
reason in the envelope, in the state it had: a tree that was active is active
again, so a later session in it takes a lease.

It prints one envelope {"hook_protocol":1,…} on stdout and, unless the tree
is gone, one line on stderr: what kept it and the command that lets it go.

EXIT STATUS: 0 the tree is gone (removed now, or already gone); 1 an error;
3 the tree was kept, or the request refused (not a tree custody keeps, a
payload it cannot use). Claude Code reports the tree removed only on 0.`
}

// Run retires the tree.
func (c *HookWorktreeRemoveCmd) Run(a *App) error {
	env := hookEnvelope{Hook: "worktree-remove"}
	defer a.hookDone(&env)
	p, err := readHookPayload(os.Stdin)
	if err != nil {
		refuseHook(&env, payloadRefusal(env.Hook, err))
		return nil
	}
	if p.Cwd != "" {
		a.Dir = a.path(p.Cwd)
	}
	target := a.path(firstOf(c.Path, p.WorktreePath))
	if target == "" {
		target = a.Dir
	}
	env.Session = firstOf(c.Session, p.Session)
	agent := firstOf(c.Agent, p.Agent)
	if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
		// Nothing is there: the tree is gone (a record custody still keeps
		// of it is settled by the next plan, with its proof).
		env.OK, env.Outcome, env.Path = true, string(machine.OutcomeAlreadyDone), target
		return nil
	}
	e, err := a.mutatingEnv()
	if err != nil {
		failHook(&env, a, err)
		return nil
	}
	actor := hookActor(agent, env.Session)
	now := e.Now().UTC()
	defer func() {
		if env.Refusal != nil || env.Error != nil {
			journalHook(&env, e.Store, env.ID, actor, now)
		}
	}()
	res, err := agents.RetireHookTree(a.Ctx, e, agents.RetireRequest{Dir: target, Session: env.Session, Hook: env.Hook, Agent: agent, Actor: actor,
		ExcuseRequesters: true})
	env.ID, env.Path, env.Removal = res.ID, res.Path, res.Removal
	switch {
	case err != nil:
		failHook(&env, a, err)
	case res.Kept:
		env.OK, env.Outcome, env.Refusal, env.Refusals = false, string(machine.OutcomeKept), res.Refusal, res.Refusals
	default:
		env.OK, env.Outcome = true, string(res.Removal.Outcome)
	}
	if env.Refusal != nil && env.Refusal.Code == machine.CodeNotInWorktree {
		// Something is at the path and custody keeps no tree there: it
		// removes only what it keeps, so the tree is not gone.
		env.OK = false
	}
	return nil
}
