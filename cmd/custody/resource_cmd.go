package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/resource"
)

// ResourceCmd groups the resource commands.
type ResourceCmd struct {
	Identity ResourceIdentityCmd `cmd:"" help:"Print a resource's handle for a worktree."`
	Ensure   ResourceEnsureCmd   `cmd:"" help:"Run every ensure command of a worktree's resources (for session start)."`
	GC       ResourceGCCmd       `cmd:"" name:"gc" help:"Destroy resources whose worktree is provably gone."`
	List     ResourceListCmd     `cmd:"" help:"List the resource ledger."`
}

// ResourceIdentityCmd prints a handle.
type ResourceIdentityCmd struct {
	Name string `arg:"" help:"The resource's name in custody.toml."`
	ID   string `name:"id" help:"The worktree: its id, a unique id prefix, the tree's directory name or its path (default: the managed worktree containing the current directory)."`
}

// Help is the long help of resource identity.
func (ResourceIdentityCmd) Help() string {
	return `Prints the handle <slug>-<id>-<name> of a worktree's resource, as the ledger
holds it (the same value as @resource@ and CUSTODY_RESOURCE_<NAME> in its .env).

EXIT STATUS: 0 done, 1 error.`
}

// Run prints the handle <slug>-<id>-<name>.
func (c *ResourceIdentityCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	if _, ok := e.Config.Resource(c.Name); !ok {
		return &machine.Refusal{Code: machine.CodeUnknownRecord, Retry: "custody resource list",
			Message: fmt.Sprintf("custody.toml declares no resource %q", c.Name)}
	}
	id, err := worktreeOrHere(e, a.Dir, c.ID)
	if err != nil {
		return err
	}
	// The ledger's handle is the one the resource was made with; the
	// configuration (its slug) may have changed since.
	h := machine.Handle(e.Config.Slug, id, c.Name)
	if r, err := e.Store.GetResource(id + "/" + c.Name); err == nil {
		h = r.Handle
	}
	a.done(map[string]string{"id": id, "name": c.Name, "handle": h, "ident": machine.Ident(h)}, func(w io.Writer) { fmt.Fprintln(w, h) })
	return nil
}

// ResourceEnsureCmd runs ensure commands.
type ResourceEnsureCmd struct {
	ID string `arg:"" optional:"" complete:"trees" help:"The worktree: its id, a unique id prefix, the tree's directory name or its path (default: the managed worktree containing the current directory)."`
}

// Help is the long help of resource ensure.
func (ResourceEnsureCmd) Help() string {
	return `Runs the ensure command of every active resource of the worktree (idempotent
re-readiness, for the start of a session) and records each run in the journal.
In an active adopted tree it first creates each resource custody.toml declares
that the tree never had (adoption makes none), each under its own create
intent, as custody new does; custody.toml must be approved (custody trust).

EXIT STATUS: 0 done, 1 error, 3 an ensure or a create failed.`
}

// Run runs the ensures.
func (c *ResourceEnsureCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	id, err := worktreeOrHere(e, a.Dir, c.ID)
	if err != nil {
		return err
	}
	outs, err := resource.Ensure(a.Ctx, e, id)
	if err != nil {
		return err
	}
	a.done(resource.EnsureResult{ID: id, Resources: outs}, func(w io.Writer) {
		if len(outs) == 0 {
			fmt.Fprintln(w, "no ensure commands to run")
		}
		for _, o := range outs {
			sayf(w, "%s %s (exit %d)\n", o.Outcome, o.Handle, o.ExitCode)
			if o.Refusal != nil {
				writeRefusal(w, string(o.Outcome)+" "+o.ID, o.Refusal)
			}
		}
	})
	return nil
}

// ResourceGCCmd reclaims orphaned resources.
type ResourceGCCmd struct {
	DryRun    bool `name:"dry-run" help:"Report what would be reclaimed and why the rest is kept; change nothing."`
	GoneRepos bool `name:"gone-repos" help:"Reclaim the resources of repositories that no longer exist, from the user-level ledger in $XDG_STATE_HOME/custody; runs anywhere."`
}

// Help is the long help of resource gc.
func (ResourceGCCmd) Help() string {
	return `Destroys exactly the ledger entries whose worktree is provably gone: its git
admin key is absent (a locked or unmounted worktree keeps it and is live), no live
worktree holds its path or handle, and gc is not false. Runs only the frozen
destroy commands of this repository's ledger, re-checking each entry right before.

--gone-repos works from the user-level ledger instead, where every entry's
frozen destroy is mirrored when it is made ($XDG_STATE_HOME/custody/resources),
and needs no repository: it destroys the resources of each repository that no
longer exists (nothing at its recorded git dir, and no repository in the index
of repositories holds its id elsewhere), each under a destroy intent recorded
first. A repository that was moved keeps its resources and is reported as moved
(custody learns its new place from any command run in it). The destroy commands
were approved with the custody.toml that froze them; they run as frozen.

EXIT STATUS: 0 done, 1 error, 3 a destroy failed or an orphan cannot be reclaimed.`
}

// Run collects garbage.
func (c *ResourceGCCmd) Run(a *App) error {
	if c.GoneRepos {
		return c.runGoneRepos(a)
	}
	var e *steps.Env
	var err error
	if c.DryRun {
		e, err = a.env(false)
	} else {
		e, err = a.mutatingEnv()
	}
	if err != nil {
		return err
	}
	items, err := resource.GC(a.Ctx, e, c.DryRun)
	if err != nil {
		return err
	}
	a.done(resource.GCResult{DryRun: c.DryRun, Items: items}, func(w io.Writer) {
		if len(items) == 0 {
			fmt.Fprintln(w, "the ledger holds no live resources")
		}
		for _, it := range items {
			sayf(w, "%-13s %s (%s)\n", it.Outcome, it.ID, it.Handle)
			if it.Refusal != nil {
				fmt.Fprint(w, "\t") // the indent is layout, not part of the escaped subject
				writeRefusal(w, string(it.Outcome)+" "+it.ID, it.Refusal)
			}
		}
	})
	return nil
}

// ResourceListCmd lists the ledger.
type ResourceListCmd struct {
	All bool `name:"all" help:"Include destroyed entries."`
}

// Help is the long help of resource list.
func (ResourceListCmd) Help() string {
	return `Lists the resource ledger: each entry's state, handle and last outcome;
destroyed entries only with --all.

EXIT STATUS: 0 done, 1 error.`
}

// Run lists.
func (c *ResourceListCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	all, err := e.Store.Resources()
	if err != nil {
		return err
	}
	out := []machine.Resource{}
	for _, r := range all {
		if c.All || r.State != machine.StateTombstoned {
			out = append(out, r)
		}
	}
	a.done(map[string]any{"resources": out}, func(w io.Writer) {
		if len(out) == 0 {
			fmt.Fprintln(w, "no resources")
			return
		}
		rows := [][]string{{"ID", "STATE", "HANDLE", "LAST"}}
		for _, r := range out {
			rows = append(rows, []string{r.ID, string(r.State), r.Handle, r.Evidence.Outcome})
		}
		table(w, rows)
	})
	return nil
}

// worktreeOrHere is the worktree ref names (steps.ResolveRecord), or with
// no ref the managed worktree containing dir.
func worktreeOrHere(e *steps.Env, dir, ref string) (string, error) {
	if ref == "" {
		return steps.CurrentID(e, dir)
	}
	return steps.ResolveRecord(e, dir, ref, "custody list")
}

// runGoneRepos is resource gc --gone-repos: no repository is opened.
func (c *ResourceGCCmd) runGoneRepos(a *App) error {
	index, _, err := steps.RepositoryIndexPath(a.getenv)
	if errors.Is(err, steps.ErrNoStateHome) {
		return &machine.Refusal{Code: machine.CodeUsage, Retry: "custody resource gc --gone-repos --dry-run",
			Message: err.Error() + ", so there is no user-level ledger of resources for --gone-repos to read: set one"}
	}
	if err != nil {
		return err
	}
	g := resource.GoneEnv{Ledger: resource.UserLedgerDir(a.getenv), Index: index, Holder: steps.Self(), Now: clock(), Wait: a.Globals.LockTimeout}
	res, err := resource.GoneRepos(a.Ctx, g, c.DryRun)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if len(res.Items) == 0 {
			fmt.Fprintln(w, "no resources of a gone repository")
		}
		for _, it := range res.Items {
			if it.Host != "" {
				sayf(w, "%-13s %s (%s): recorded on host %s, the only one that can tell whether its repository is gone\n", "elsewhere", it.ID, it.Handle, it.Host)
				continue
			}
			if it.MovedTo != "" {
				sayf(w, "%-13s %s (%s): its repository moved to %s\n", "moved", it.ID, it.Handle, it.MovedTo)
				continue
			}
			sayf(w, "%-13s %s (%s) of %s\n", it.Outcome, it.ID, it.Handle, it.CommonDir)
			if it.Refusal != nil {
				fmt.Fprint(w, "\t") // the indent is layout, not part of the escaped subject
				writeRefusal(w, string(it.Outcome)+" "+it.ID, it.Refusal)
			}
		}
	})
	return nil
}
