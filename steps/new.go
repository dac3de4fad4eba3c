package steps

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// NewResult is what `custody new` made.
type NewResult struct {
	ID        string            `json:"id"`
	Path      string            `json:"path"`
	Branch    string            `json:"branch"`
	Head      string            `json:"head"`
	Port      int               `json:"port,omitempty"`
	Resources []ResourceOutcome `json:"resources,omitempty"`
	// Interrupted says new was interrupted after git began making the tree;
	// its create intent stays for custody resume, which finishes or undoes it.
	Interrupted string `json:"interrupted,omitempty"`
	// Hook says git made the tree exactly as intended but then exited
	// non-zero (a failing post-checkout hook): the tree exists and is
	// active; this names git's exit status and what it printed.
	Hook string `json:"hook,omitempty"`
	// Warning is set when the tree was made under a name live trees
	// already go by.
	Warning *NewWarning `json:"warning,omitempty"`
}

// Pending reports whether new was interrupted after it began making the
// tree (exit 3): something may have been made, and resume settles it.
func (r NewResult) Pending() bool { return r.Interrupted != "" }

// ResolveCommit resolves rev to a full commit id as git does in dir, the
// directory custody was started in: HEAD there is that tree's HEAD (a
// linked worktree's own, not the main checkout's). An empty rev is the
// main checkout's HEAD; an empty dir is the main checkout.
func (e *Env) ResolveCommit(ctx context.Context, rev, dir string) (string, error) {
	if rev == "" || dir == "" {
		dir = e.Repo.MainCheckout
	}
	if rev == "" {
		rev = "HEAD"
	}
	// Resolve the name first, then peel the object: appending ^{commit}
	// to a search like ":/message" would change what it searches for.
	// HEAD, the default, is peeled in the same call: HEAD^{commit} is
	// exactly HEAD's commit.
	var out []byte
	var err error
	if rev == "HEAD" {
		out, err = e.Git.Observe(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", "HEAD^{commit}")
	} else {
		out, err = e.Git.Observe(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev)
		if err == nil {
			out, err = e.Git.Observe(ctx, dir, "rev-parse", "--verify", "--quiet", strings.TrimSpace(string(out))+"^{commit}")
		}
	}
	c := strings.TrimSpace(string(out))
	if err != nil || !machine.IsFullCommit(c) {
		return "", machine.UnknownRevisionRefusal(rev, dir)
	}
	return c, nil
}

// NewRequest is what `custody new` is asked to make.
type NewRequest struct {
	// Name is the person's name for the tree; its id is made of it.
	Name string
	// From is the revision the tree starts at ("" for the main
	// checkout's HEAD), resolved in Dir (ResolveCommit).
	From string
	// Dir is where the person ran custody.
	Dir string
	// Branch, when set, is the name of the new branch custody creates for
	// the tree instead of its own <prefix><id>. It must not exist yet.
	Branch string
	// Checkout, when set, is an existing local branch the tree is made on,
	// at its tip; no other worktree may have it checked out. custody did
	// not create it and never deletes it. It excludes Branch and From.
	Checkout string
}

// New is NewFor of a tree named name, from from resolved in dir, on a
// branch custody creates and names, without the warning about a name live
// trees already go by: an agent's hook names its trees as it likes, and
// reads no warning.
func New(ctx context.Context, e *Env, name, from, dir string) (NewResult, error) {
	return newTree(ctx, e, NewRequest{Name: name, From: from, Dir: dir})
}

// NewFor creates a managed worktree: it refuses a name with nothing an id
// can be made of (CodeEmptyName), resolves the revision, picks a free id,
// commits the create intent, runs `git worktree add`, verifies git
// registered exactly that path under admin key id with HEAD at the commit,
// writes the ready marker and activates the record. Interrupted at any point,
// Resume finishes or discards it. When custody.toml declares commands whose
// content was never approved (custody trust), it refuses with
// CodeConfigUntrusted before anything is made. req.From is resolved in
// req.Dir, where the person ran custody (ResolveCommit).
//
// The tree's branch is custody's <prefix><id>, or req.Branch, both created
// by git worktree add -b and recorded as created by custody (only such a
// branch is ever deleted); or req.Checkout, an existing branch recorded as
// not custody's. A branch name git would not take, a req.Branch that
// exists, a req.Checkout that does not or that another worktree has
// checked out are refused before anything is made (CodeBranchInvalid,
// CodeBranchExists, CodeBranchMissing, CodeBranchCheckedOut).
//
// When git made the tree exactly as intended but exited non-zero (a
// post-checkout hook failed), the tree is completed like any other and the
// result's Hook says what git reported: the creation did not fail. When
// live trees already go by req.Name, the tree is made and the result's
// Warning names them.
func NewFor(ctx context.Context, e *Env, req NewRequest) (NewResult, error) {
	res, err := newTree(ctx, e, req)
	if err == nil && res.ID != "" {
		res.Warning = e.nameWarning(req.Name, res.ID)
	}
	return res, err
}

// newTree is NewFor without the name's warning.
func newTree(ctx context.Context, e *Env, req NewRequest) (NewResult, error) {
	// A name or branch that can never be made is refused first.
	if err := CheckNewRequest(req); err != nil {
		return NewResult{}, err
	}
	// Nothing is made before the commands it would run are approved.
	if err := e.RequireTrusted(); err != nil {
		return NewResult{}, err
	}
	commit, err := e.newBranch(ctx, req)
	if err != nil {
		return NewResult{}, err
	}
	if err := e.EnsureRoot(); err != nil {
		return NewResult{}, err
	}
	if _, err := e.ExcludeRoot(); err != nil {
		return NewResult{}, err
	}
	var rec machine.Record
	for attempt := 0; ; attempt++ {
		var rnd [3]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return NewResult{}, err
		}
		id := machine.WorktreeID(req.Name, rnd)
		branch, origin := e.Policy.BranchPrefix+id, machine.BranchOriginCreated
		switch {
		case req.Branch != "":
			branch = req.Branch
		case req.Checkout != "":
			branch, origin = req.Checkout, machine.BranchOriginExisting
			if req.Checkout == e.Policy.BranchPrefix+id {
				// Never an id whose own branch name is the person's
				// branch: a custody that predates the recorded origin
				// would take it for custody's.
				continue
			}
		}
		port, err := e.portFor(id)
		if err != nil {
			return NewResult{}, err
		}
		cand := machine.Record{ID: id, Kind: machine.KindWorktree, Origin: machine.OriginCreated,
			Path: filepath.Join(e.Root, id), Branch: branch, BranchOrigin: origin, BaseCommit: commit, AdminKey: id, Port: port}
		obs, _, err := e.ObserveRecord(ctx, cand, observe.Scope{})
		if err != nil {
			return NewResult{}, err
		}
		intent := &machine.Intent{Kind: machine.IntentCreate, Path: cand.Path, Branch: cand.Branch, Commit: commit,
			AdminKey: id, Holder: e.Holder, At: e.Now().UTC()}
		rec, err = e.fire(ctx, cand, machine.TriggerCreate, machine.Firing{Obs: obs, Intent: intent}, "create intent")
		if err == nil {
			break
		}
		var r *machine.Refusal
		if attempt < 8 && (errors.Is(err, store.ErrConflict) || errors.As(err, &r) && r.Code == machine.CodeGuardFailed) {
			continue // the id is taken: draw another, never overwrite
		}
		return NewResult{}, err
	}
	failpoint.At("new/after-intent")
	failpoint.Pause("new/after-intent")
	add := []string{"worktree", "add", "--no-track", "-b", rec.Branch, "--", rec.Path, rec.BaseCommit}
	if rec.BranchOrigin == machine.BranchOriginExisting {
		// The existing branch, checked out as it is: git refuses it when
		// another worktree has it, and never moves or makes it.
		add = []string{"worktree", "add", "--", rec.Path, rec.Branch}
	}
	_, addErr := gitfiles.ChangeRegistry(ctx, e.Git, e.Repo, add...)
	failpoint.At("new/after-add")
	if addErr != nil && ctx.Err() != nil {
		// Interrupted while git made the tree: what it made is not known
		// yet, and settling it now would run on after the interrupt. The
		// intent stays; resume finishes or undoes it.
		return NewResult{ID: rec.ID, Path: rec.Path, Branch: rec.Branch, Head: rec.BaseCommit,
			Interrupted: fmt.Sprintf("interrupted while git worktree add was making %s; its create intent stays, and custody resume finishes or undoes it", rec.Path)}, nil
	}
	if addErr != nil {
		// Converge now rather than leave the intent: discard if nothing was
		// made, else leave it for resume with a precise error.
		res := resumeRecord(ctx, e, rec)
		switch res.Outcome {
		case machine.OutcomeDiscarded:
			return NewResult{}, fmt.Errorf("git worktree add %s failed; nothing was kept: %w", rec.Path, addErr)
		case machine.OutcomeActivated:
			// git made exactly the intended tree and failed after it: a
			// post-checkout hook. The tree exists and is active.
			done, err := e.Store.Get(rec.ID)
			if err != nil {
				return NewResult{}, err
			}
			return NewResult{ID: done.ID, Path: done.Path, Branch: done.Branch, Head: done.BaseCommit, Port: done.Port,
				Hook: hookFailure(addErr)}, nil
		}
		return NewResult{}, fmt.Errorf("git worktree add %s failed and left something behind; run `custody resume` to settle it: %w", rec.Path, addErr)
	}
	rec, res, err := complete(ctx, e, rec, true)
	if err != nil {
		return NewResult{}, err
	}
	return NewResult{ID: rec.ID, Path: rec.Path, Branch: rec.Branch, Head: rec.BaseCommit, Port: rec.Port, Resources: res}, nil
}

// complete finishes a provisioning worktree whose tree git made: ready
// marker, then every declared resource, then created. When a required
// resource fails, everything made is rolled back in reverse (resources,
// the tree, its branch) and the record is discarded.
//
// fresh says the tree was made by this very command: only then may the
// rollback force its removal (resource commands may have written into it;
// no person has). A resumed rollback removes the tree only without force,
// so a person's work in it is never deleted.
func complete(ctx context.Context, e *Env, rec machine.Record, fresh bool) (machine.Record, []ResourceOutcome, error) {
	// Resume completing a creation runs the current file's create
	// commands: they must be approved, or the record is left as it is.
	if err := e.RequireTrusted(); err != nil {
		return rec, nil, err
	}
	if key := gitfiles.AdminKeyOf(e.Repo, rec.Path); key != rec.ID {
		return rec, nil, machine.CreateKeyMismatchRefusal(rec.ID, rec.Path, key)
	}
	if err := writeMarker(e.Repo, rec.ID, rec.ID); err != nil {
		return rec, nil, fmt.Errorf("write the ready marker of %s: %w", rec.ID, err)
	}
	failpoint.At("new/after-marker")
	outs, failed, err := e.resources().Provision(ctx, e, rec)
	if err != nil {
		return rec, outs, err
	}
	if failed != nil {
		torn, rbErr := rollback(ctx, e, rec, fresh)
		if rbErr != nil {
			return rec, outs, fmt.Errorf("%s; rolling back %s also failed, run `custody resume`: %w", failed.Message, rec.ID, rbErr)
		}
		var left []machine.Undestroyed
		for _, o := range torn {
			if o.Refusal != nil {
				left = append(left, machine.Undestroyed{Handle: o.Handle, Why: o.Refusal.Message})
			}
		}
		return rec, append(outs, torn...), machine.CreateRolledBackRefusal(rec.ID, rec.Path, failed.Message, left)
	}
	next, err := activate(ctx, e, rec)
	return next, outs, err
}

// rollback undoes a provisioning worktree custody just made in this
// command: its resources in reverse, the tree (forced: nothing in it is a
// person's yet), its branch by compare-and-swap when custody created it
// (one that existed before, new --checkout, stays), and discards the
// record.
func rollback(ctx context.Context, e *Env, rec machine.Record, force bool) ([]ResourceOutcome, error) {
	torn, err := e.resources().Teardown(ctx, e, rec.ID)
	if err != nil {
		return torn, err
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	if _, err := gitfiles.ChangeRegistry(ctx, e.Git, e.Repo, append(args, "--", rec.Path)...); err != nil {
		if hostio.Lstat(rec.Path).State != machine.PathAbsent {
			return torn, machine.CreateRollbackHeldRefusal(rec.Path, err)
		}
	}
	if hostio.Lstat(e.Repo.AdminDir(rec.ID)).State == machine.PathPresent {
		if err := dropAdminEntry(e, rec); err != nil {
			return torn, err
		}
	}
	bo, reason := machine.BranchKept, machine.BranchNotCreated
	if machine.BranchOwned(rec, e.Policy) {
		bo, reason = casDeleteBranch(ctx, e, rec.Branch, rec.BaseCommit)
	}
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil {
		return torn, err
	}
	_, err = e.fire(ctx, rec, machine.TriggerDiscard, machine.Firing{Obs: obs,
		Evidence: machine.Evidence{BranchOutcome: bo, BranchReason: reason}}, "rolled back: a required resource failed")
	return torn, err
}

// activate fires created over a fresh observation.
func activate(ctx context.Context, e *Env, rec machine.Record) (machine.Record, error) {
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil {
		return rec, err
	}
	failpoint.At("new/before-complete")
	next, err := e.fire(ctx, rec, machine.TriggerCreated, machine.Firing{Obs: obs}, "created")
	var r *machine.Refusal
	if errors.As(err, &r) && r.Code == machine.CodeGuardFailed {
		return rec, machine.CreateNotIntendedRefusal(rec.Path, r.Message)
	}
	return next, err
}

// writeMarker writes the ready marker, "<id>\n" in the git admin directory
// key of the record id's worktree, durably (WriteFile: temp file, fsync,
// rename, directory fsync).
func writeMarker(repo hostio.Repo, key, id string) error {
	if err := safefile.DirBelow(repo.CommonDir, repo.AdminDir(key), false, 0); err != nil {
		return err
	}
	return WriteFile(filepath.Join(repo.AdminDir(key), gitfiles.MarkerName), []byte(id+"\n"), 0o600)
}

// hookFailure says what git reported when it made the tree and then
// failed: its exit status and everything it printed on stderr.
func hookFailure(err error) string {
	var ee *hostio.ExitError
	if errors.As(err, &ee) {
		// git's own progress and hints are not the hook's: drop them.
		var kept []string
		for _, l := range strings.Split(ee.Stderr, "\n") {
			if l = strings.TrimRight(l, "\r "); l == "" || strings.HasPrefix(l, "hint:") ||
				strings.HasPrefix(l, "Preparing worktree") || strings.HasPrefix(l, "HEAD is now at") {
				continue
			}
			kept = append(kept, l)
		}
		msg := "it printed nothing"
		if len(kept) > 0 {
			msg = "it printed: " + strings.Join(kept, "\n")
		}
		return fmt.Sprintf("git worktree add made the tree, then exited %d (a post-checkout hook failed); %s", ee.Code, msg)
	}
	return fmt.Sprintf("git worktree add made the tree, then failed (a post-checkout hook?): %v", err)
}
