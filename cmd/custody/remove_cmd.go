package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// RemoveCmd removes worktrees now, each only with a proof: the one-shot
// removal an agent's WorktreeRemove hook runs too (steps.Retire).
type RemoveCmd struct {
	IDs []string `sep:"none" arg:"" optional:"" name:"id" complete:"trees" help:"Worktrees: an id, a unique id prefix, the tree's directory name or its path (default: the managed worktree containing the current directory)."`
	// Archive captures a tree's unpublished work first, so that the
	// archive proves it (steps.RetireOptions.Archive).
	Archive bool `name:"archive" help:"Archive a tree's unpublished work first (as custody archive create does), so the archive proves it and the tree may go."`
}

// Help is the long help of remove.
func (RemoveCmd) Help() string {
	return `Removes each worktree now, as custody finish, a plan of just that tree and
custody apply of that plan would: a tree goes only with a proof, found fresh,
that its work is recoverable elsewhere. A tree that is not provably safe is
kept, in the state it had, with every reason and the command that deals with
it, then the custody remove that lets it go. It is the same removal an agent's
WorktreeRemove hook runs (custody hook worktree-remove).

Each tree is named by its id, a unique id prefix, its directory name or its
path; without one, it is the managed worktree custody runs in. The shell that
ran custody, and each parent of it while it stands in the tree, asked for the
removal: where they stand does not count as using the tree. Every other
process, and any file one holds open there, keeps it. custody steps out of the
tree first; when the directory you are in went with a tree, it says where the
main checkout is, and the function custody shell-init prints changes the
shell's directory there.

With --archive, a tree kept only for work no remote holds (commits, changed,
untracked or ignored files, nested repositories) is first archived as custody
archive create does, and goes with the archive as its proof; the output names
the archive and the command that restores it.

EXIT STATUS: 0 every tree named is gone (removed now, or before); 1 an error
(an unknown or ambiguous tree: nothing done); 3 a tree stayed.`
}

// removeResult is what remove did with each tree (package output).
type (
	removeResult = output.RemoveResult
	removeTree   = output.RemoveTree
)

// Run removes the trees.
func (c *RemoveCmd) Run(a *App) error {
	// Where the person stands, before custody steps out of it.
	cwd := standingIn()
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	ids := c.IDs
	if len(ids) == 0 {
		id, err := steps.CurrentID(e, a.Dir)
		if err != nil {
			return err
		}
		ids = []string{id}
	} else if ids, err = steps.ResolveRecords(e, a.Dir, ids, "custody list"); err != nil {
		return err
	}
	view := a.pathView(e.Repo.MainCheckout)
	stepOut(e, cwd, ids)
	res := removeResult{Trees: []removeTree{}, MainCheckout: e.Repo.MainCheckout}
	opts := steps.RetireOptions{Actor: e.Actor, ExcuseRequesters: true, Archive: c.Archive}
	left := "" // the tree the directory custody ran in went with
	for i, id := range ids {
		if a.Ctx.Err() != nil {
			res.NotStarted = ids[i:]
			break
		}
		r, err := steps.Retire(a.Ctx, e, id, opts)
		if err != nil {
			if a.Ctx.Err() != nil {
				res.StoppedAt, res.NotStarted = id, ids[i+1:]
				break
			}
			return removeFailed(res, id, err)
		}
		t := treeRemoved(r, c.Archive)
		if !t.Pending() && cwd != "" && isWithin(cwd, r.Path) {
			res.CwdGone, left = true, r.ID
		}
		res.Trees = append(res.Trees, t)
	}
	a.done(res, func(w io.Writer) {
		if os.Getenv(shellFunctionEnv) != "" {
			// The shell function reads stdout as the directory to go to;
			// the report is the person's, on stderr.
			renderRemove(a.Stderr, res, view)
			if res.CwdGone {
				printPath(w, res.MainCheckout)
			}
			return
		}
		renderRemove(w, res, view)
		if res.CwdGone {
			fmt.Fprintf(a.Stderr, "custody remove: the directory you are in went with %s; the main checkout is at %s\n\tcd -- %s\n",
				machine.EscapeControl(left), machine.EscapeControl(res.MainCheckout), machine.QuoteArg(res.MainCheckout))
		}
	})
	return nil
}

// standingIn is the process's working directory with its symbolic links
// resolved (record paths are canonical), or "" when it cannot be read.
func standingIn() string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	return cwd
}

// stepOut moves custody's own working directory to the main checkout when
// it lies in one of the trees it is about to remove: custody does not use
// the tree it removes, and what it runs after a removal does not start in
// a directory that is gone. A move that fails leaves it where it is
// (custody's own processes never count as using a tree).
func stepOut(e *steps.Env, cwd string, ids []string) {
	if cwd == "" {
		return
	}
	for _, id := range ids {
		rec, err := e.Store.Get(id)
		if err == nil && rec.State != machine.StateTombstoned && isWithin(cwd, rec.Path) {
			_ = os.Chdir(e.Repo.MainCheckout)
			return
		}
	}
}

// removeFailed is the error of remove that failed at tree id, naming the
// trees it had already let go, which stay gone.
func removeFailed(res removeResult, id string, err error) error {
	var gone []string
	for _, t := range res.Trees {
		if !t.Pending() {
			gone = append(gone, t.ID)
		}
	}
	if len(gone) == 0 {
		return err
	}
	return fmt.Errorf("%s went, then %s failed: %w", strings.Join(gone, ", "), id, err)
}

// treeRemoved is what Retire did with one tree, as remove reports it; a
// kept tree's next command removes it once its reasons are dealt with.
func treeRemoved(r steps.Retirement, archive bool) removeTree {
	t := removeTree{ID: r.ID, Path: r.Path, Outcome: machine.OutcomeKept, State: r.State, Proof: r.Proof,
		Settlement: r.Settlement, Archive: r.Archive}
	if o := r.Removal; o != nil {
		t.Branch, t.Recovered, t.Resources = o.Branch, o.Recovered, o.Resources
		if !r.Kept {
			t.Outcome = o.Outcome
		}
	}
	if r.Kept {
		argv := []string{"custody", "remove"}
		if archive {
			argv = append(argv, "--archive")
		}
		t.Next = machine.CommandOn(argv, r.ID)
		t.Refusals = make([]machine.Refusal, 0, len(r.Refusals)+1)
		for _, x := range r.Refusals {
			t.Refusals = append(t.Refusals, retryRemoving(x, t.Next))
		}
		if r.Refusal != nil {
			first := retryRemoving(*r.Refusal, t.Next)
			t.Refusal = &first
			if len(t.Refusals) == 0 {
				t.Refusals = append(t.Refusals, first)
			}
		}
	}
	if t.Outcome.Settled() {
		t.State = ""
	}
	return t
}

// retryRemoving is r as remove reports it: a reason whose retry is
// custody plan (the person deals with it as its message says, then plan
// looks again) is retried by the custody remove that looks again and lets
// the tree go, next.
func retryRemoving(r machine.Refusal, next string) machine.Refusal {
	if r.Retry == "custody plan" {
		r.Retry = next
	}
	return r
}

// renderRemove prints what remove did, a tree at a time: a tree that went
// as one line with what let it go (the proof, the branch deleted with the
// commit it pointed at), a kept tree as each reason with its retry, then
// the command that removes it once they are dealt with. A line that would
// run past 80 columns puts each detail on its own indented line.
func renderRemove(w io.Writer, res removeResult, v pathView) {
	counts := map[machine.Outcome]int{}
	var order []machine.Outcome
	for _, t := range res.Trees {
		if counts[t.Outcome] == 0 {
			order = append(order, t.Outcome)
		}
		counts[t.Outcome]++
		if a := t.Archive; a != nil {
			sayf(w, "archived %s as %s: %d commit(s), %d file(s)\n", t.ID, a.ID, len(a.Commits), a.Files)
		}
		if t.Outcome == machine.OutcomeKept {
			renderKeptTree(w, t, v)
		} else {
			fitLine(w, string(t.Outcome)+" "+machine.EscapeControl(t.ID), goneDetails(t))
		}
		for _, r := range t.Recovered {
			sayf(w, "  wrote %s\n", r.Ref)
		}
		for _, r := range t.Resources {
			if r.Refusal != nil {
				writeRefusal(w, string(r.Outcome)+" "+r.ID, r.Refusal)
			}
		}
		if a := t.Archive; a != nil && !t.Pending() {
			fmt.Fprintf(w, "  to restore it: %s\n", machine.CommandOn([]string{"custody", "archive", "restore"}, a.ID, t.Path))
		}
	}
	if len(res.Trees) > 1 {
		parts := make([]string, len(order))
		for i, o := range order {
			parts[i] = fmt.Sprintf("%d %s", counts[o], o)
		}
		fmt.Fprintln(w, strings.Join(parts, ", "))
	}
}

// goneDetails are what let a tree go, for its line: the branch deleted
// (with the commit it pointed at) or kept, and the proof or what a
// settlement stood on.
func goneDetails(t removeTree) []string {
	var d []string
	if t.Outcome == machine.OutcomeAlreadyDone {
		return []string{"its record was ended before"}
	}
	if t.Settlement != nil {
		return []string{"its directory was gone already; " + machine.EscapeControl(settleText(machine.PlanItem{Proof: t.Proof, Settlement: t.Settlement, Branch: branchName(t)}))}
	}
	if b := t.Branch; b != nil {
		switch b.Outcome {
		case machine.BranchDeleted:
			d = append(d, fmt.Sprintf("branch %s deleted at %s", machine.EscapeControl(b.Name), machine.Abbrev(b.Commit, machine.ShortCommit)))
		case machine.BranchKept:
			d = append(d, fmt.Sprintf("branch %s kept: %s", machine.EscapeControl(b.Name), machine.EscapeControl(b.Reason)))
		}
	}
	if t.Proof != nil {
		d = append(d, "proof: "+machine.EscapeControl(proofText(machine.PlanItem{Proof: t.Proof})))
	}
	return d
}

// branchName is the name of the tree's branch as the removal reported it.
func branchName(t removeTree) string {
	if t.Branch != nil {
		return t.Branch.Name
	}
	return ""
}

// renderKeptTree prints every reason a tree stays, each with its retry,
// then the command that removes it once they are dealt with.
func renderKeptTree(w io.Writer, t removeTree, v pathView) {
	subject := "kept " + t.ID
	it := machine.PlanItem{Path: t.Path}
	then := false
	for _, r := range t.Refusals {
		fmt.Fprintf(w, "%s [%s]: %s\n\tto retry: %s\n", machine.EscapeControl(subject), r.Code, v.message(it, &r), retryOf(&r))
		then = then || r.Retry != t.Next
	}
	if then && t.Next != "" {
		fmt.Fprintf(w, "\tthen: %s\n", t.Next)
	}
}

// fitLine writes head with its details in parentheses on one line when it
// fits 80 columns, else head alone and each detail on an indented line.
func fitLine(w io.Writer, head string, details []string) {
	if len(details) == 0 {
		fmt.Fprintln(w, head)
		return
	}
	line := head + " (" + strings.Join(details, "; ") + ")"
	if len(line) <= 80 {
		fmt.Fprintln(w, line)
		return
	}
	fmt.Fprintln(w, head)
	for _, d := range details {
		fmt.Fprintf(w, "  %s\n", d)
	}
}
