package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/land"
)

// LandCmd integrates a tree's branch into the default branch of the
// remote that proves it, then removes the tree on the fresh proof.
type LandCmd struct {
	ID     string `arg:"" optional:"" name:"id" complete:"trees" help:"The worktree: an id, a unique id prefix, the tree's directory name or its path (default: the managed worktree containing the current directory)."`
	Squash bool   `name:"squash" xor:"method" help:"Land the branch's changes as one commit on the target's tip."`
	Rebase bool   `name:"rebase" xor:"method" help:"Replay each of the branch's commits onto the target's tip (a fast-forward when it already is on it)."`
	Merge  bool   `name:"merge" xor:"method" help:"Land a merge commit of the target's tip and the branch."`
	Onto   string `name:"onto" placeholder:"BRANCH" help:"Land on this branch of the proving remote instead of the one its HEAD names."`
	Plan   bool   `name:"plan" xor:"mode" help:"Land, then write the tree's removal as a plan file (-o FILE) for custody apply, instead of removing it now."`
	Out    string `short:"o" name:"out" placeholder:"FILE" help:"With --plan: the plan file to write (custody.plan/1 JSON)."`
	Yes    bool   `name:"yes" xor:"mode" help:"Land, then remove the tree at once on the fresh proof."`
}

// Help is the long help of land.
func (LandCmd) Help() string {
	return `Integrates the tree's branch into the default branch of the remote that proves
it (the remote a push is proven on, as custody plan advises pushes; its
default branch is the one its HEAD names, or --onto BRANCH), pushes the
result, then lets the tree go on the fresh proof. The person's main checkout
and the tree are never checked out or changed: the integration is computed
with git merge-tree and git commit-tree in the object store alone.

Without a method, land fast-forwards, and refuses when the target moved on.
--squash lands one commit holding every change (its message the commit's own,
or the branch's subjects listed); --rebase replays each commit with its own
author and message; --merge lands a merge commit. A conflict is refused, with
the conflicting paths, and nothing is pushed.

The tree must be one custody plan would remove but for its work not being on
a remote yet: clean, no live lease, no process in it, nothing hidden from git
status. The [land] check command of custody.toml, once approved with custody
trust, runs in the tree first; a failure refuses.

The push goes under a lease on the exact tip the integration was computed
against (--force-with-lease=REF:TIP): a target that moved meanwhile refuses it
and nothing is pushed. An intent is journaled before the push and the landing
(target, old and new tip, method) after the remote shows it, before anything
is removed. Run again after an interruption, land finds whether the push
landed and goes on from there.

Then --yes removes the tree as custody remove does; --plan -o FILE finishes it
and writes its removal as a plan for custody apply FILE. One of them is
required.

EXIT STATUS: 0 landed, and the tree removed (--yes) or its removal planned
(--plan); 1 an error (bad input: nothing done); 3 not landed, or landed and
the tree kept, with every reason.`
}

// validate checks the flags before anything is done.
func (c *LandCmd) validate() error {
	switch {
	case !c.Plan && !c.Yes:
		return &usageError{errors.New("land needs --yes (remove the tree at once once it landed) or --plan -o FILE (write its removal for custody apply)")}
	case c.Plan && c.Out == "":
		return &usageError{errors.New("land --plan needs -o FILE: the plan file custody apply reads")}
	case c.Plan && c.Out == stdoutPath:
		return &usageError{errors.New("land --plan -o - is not supported: give -o FILE, then custody apply FILE")}
	case !c.Plan && c.Out != "":
		return &usageError{errors.New("-o FILE goes with --plan")}
	}
	return nil
}

// method is the method the flags ask for ("" fast-forwards).
func (c *LandCmd) method() machine.LandMethod {
	switch {
	case c.Squash:
		return machine.LandSquash
	case c.Rebase:
		return machine.LandRebase
	case c.Merge:
		return machine.LandMerge
	}
	return ""
}

// retry is the land command that retries on id with method.
func (c *LandCmd) retry(id string, m machine.LandMethod) string {
	argv := []string{"custody", "land"}
	if m != "" && m != machine.LandFastForward {
		argv = append(argv, "--"+string(m))
	}
	if c.Onto != "" {
		argv = append(argv, "--onto", c.Onto)
	}
	if c.Plan {
		argv = append(argv, "--plan", "-o", c.Out)
	} else {
		argv = append(argv, "--yes")
	}
	return machine.CommandOn(argv, id)
}

// Run lands the tree.
func (c *LandCmd) Run(a *App) error {
	if err := c.validate(); err != nil {
		return err
	}
	cwd := standingIn()
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	id := c.ID
	if id == "" {
		if id, err = steps.CurrentID(e, a.Dir); err != nil {
			return err
		}
	} else {
		ids, err := steps.ResolveRecords(e, a.Dir, []string{id}, "custody list")
		if err != nil {
			return err
		}
		id = ids[0]
	}
	if c.Yes {
		stepOut(e, cwd, []string{id})
	}
	res, err := land.Land(a.Ctx, e, id, land.Options{Method: c.method(), Onto: c.Onto, Yes: c.Yes,
		Retry: c.retry(id, c.method()), RetryWith: func(m machine.LandMethod) string { return c.retry(id, m) }})
	if err != nil {
		return err
	}
	view := a.pathView(e.Repo.MainCheckout, e.Root)
	shown := ""
	if res.Plan != nil {
		b, err := planBytes(*res.Plan)
		if err != nil {
			return err
		}
		outPath := a.path(c.Out)
		if err := steps.WriteFile(outPath, b, 0o600); err != nil {
			return outputError(err, outPath, c.retry(id, c.method()))
		}
		res.PlanFile, shown = outPath, view.relative(resolvedPath(outPath))
		if !res.Pending() {
			res.Next = planNext(c.Out, resolvedPath(outPath), view)
		}
	}
	a.done(res, func(w io.Writer) { renderLand(w, res, shown) })
	return nil
}

// renderLand prints what land did: the landing, then the removal (done or
// planned, in the plan file shown as planFile) or every reason the tree
// stays, and the next command.
func renderLand(w io.Writer, res land.Result, planFile string) {
	id := machine.EscapeControl(res.ID)
	switch res.Landing {
	case land.Landed:
		t := res.Target
		resumed := ""
		if res.Resumed {
			resumed = " (an earlier run's push, found landed)"
		}
		sayf(w, "landed %s on %s %s by %s: %s -> %s%s\n", res.ID, t.Remote, t.Ref, string(res.Method),
			machine.Abbrev(res.Old, machine.ShortCommit), machine.Abbrev(res.New, machine.ShortCommit), resumed)
	case land.AlreadyLanded:
		if res.Target != nil {
			sayf(w, "%s is already on %s %s: nothing to push\n", res.ID, res.Target.Remote, res.Target.Ref)
		} else {
			fmt.Fprintf(w, "%s was landed and removed before\n", id)
		}
	}
	then := false
	for i := range res.Refusals {
		verb := "kept"
		if res.Landing == land.NotLanded {
			verb = "not landed"
		}
		writeRefusal(w, verb+" "+res.ID, &res.Refusals[i])
		then = then || !strings.HasPrefix(res.Refusals[i].Retry, "custody land ")
	}
	if len(res.Refusals) > 0 {
		if then && res.Next != "" {
			// A reason the person deals with (a stash, a process to end)
			// is followed by the land that goes on.
			fmt.Fprintf(w, "\tthen: %s\n", res.Next)
		}
		return
	}
	switch {
	case res.Removed && res.Removal != nil && res.Removal.Outcome == machine.OutcomeAlreadyDone && res.Target == nil:
	case res.Removed:
		d := []string{}
		if res.Removal != nil {
			d = goneDetails(removeTree{Outcome: res.Removal.Outcome, Branch: res.Removal.Branch, Proof: res.Proof})
		} else if res.Proof != nil {
			d = append(d, "proof: "+machine.EscapeControl(proofText(machine.PlanItem{Proof: res.Proof})))
		}
		fitLine(w, "removed "+id, d)
	case res.PlanFile != "":
		sayf(w, "wrote %s: remove %s (proof: %s)\n", planFile, res.ID, proofText(machine.PlanItem{Proof: res.Proof}))
	}
	if res.Next != "" && res.PlanFile != "" {
		fmt.Fprintf(w, "next: %s\n", res.Next)
	}
}
