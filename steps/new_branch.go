package steps

import (
	"context"
	"fmt"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// The branch of a new tree and the name it goes by: what new checks
// before anything is made (CheckNewRequest, newBranch), and the warning
// for a name live trees already go by.

// NewWarning says new made the tree, and what deserves a look: the live
// trees that already go by its name (machine.SameName).
type NewWarning struct {
	// Message says it in one line, naming each tree by id and path.
	Message string `json:"message"`
	// Trees are those trees.
	Trees []NamedTree `json:"trees"`
}

// NamedTree names a worktree by its id and path.
type NamedTree struct {
	ID   string `json:"id"`
	Path string `json:"path"`
}

// nameWarning warns when live trees other than id go by name
// (machine.SameName); nil when none does, or the store cannot say.
func (e *Env) nameWarning(name, id string) *NewWarning {
	live, err := e.Store.ListLive()
	if err != nil {
		return nil
	}
	live = slices.DeleteFunc(live, func(r machine.Record) bool { return r.ID == id })
	same := machine.SameName(name, live)
	if len(same) == 0 {
		return nil
	}
	w := &NewWarning{Message: machine.NameInUseWarning(name, same)}
	for _, r := range same {
		w.Trees = append(w.Trees, NamedTree{ID: r.ID, Path: r.Path})
	}
	return w
}

// newBranch checks the branch req asks for before anything is made, and
// returns the commit the tree starts at: req.From resolved, or the tip of
// req.Checkout.
func (e *Env) newBranch(ctx context.Context, req NewRequest) (string, error) {
	if req.Checkout == "" {
		commit, err := e.ResolveCommit(ctx, req.From, req.Dir)
		if err != nil || req.Branch == "" {
			return commit, err
		}
		inv, err := gitfiles.TakeInventoryOf(ctx, e.Git, e.Repo, req.Branch)
		if err != nil {
			return "", err
		}
		if _, ok := inv.Branches[req.Branch]; ok {
			at, _ := inv.CheckedOutAt(req.Branch)
			return "", machine.BranchExistsRefusal(req.Name, req.Branch, at)
		}
		return commit, nil
	}
	inv, err := gitfiles.TakeInventoryOf(ctx, e.Git, e.Repo, req.Checkout)
	if err != nil {
		return "", err
	}
	tip, ok := inv.Branches[req.Checkout]
	if !ok {
		return "", machine.BranchMissingRefusal(req.Checkout, "")
	}
	if at, out := inv.CheckedOutAt(req.Checkout); out {
		return "", machine.BranchCheckedOutRefusal(req.Name, req.Checkout, at)
	}
	if !machine.IsFullCommit(tip) {
		return "", machine.UnknownRevisionRefusal("refs/heads/"+req.Checkout, e.Repo.MainCheckout)
	}
	return tip, nil
}

// CheckNewRequest refuses, before anything is opened or made, a request
// whose name or branch can never be made: a name with nothing an id can be
// made of (machine.CheckWorktreeName), a --branch git would not take as a
// branch name (CodeBranchInvalid), a --checkout no branch can have
// (CodeBranchMissing).
func CheckNewRequest(req NewRequest) error {
	if r := machine.CheckWorktreeName(req.Name); r != nil {
		return r
	}
	if req.Branch != "" && req.Checkout != "" {
		return fmt.Errorf("new takes --branch or --checkout, not both")
	}
	if req.Checkout != "" && req.From != "" {
		return fmt.Errorf("new --checkout starts the tree at the branch's tip; it takes no --from")
	}
	if req.Branch != "" {
		if why := machine.BranchNameProblem(req.Branch); why != "" {
			return machine.BranchInvalidRefusal(req.Name, req.Branch, why)
		}
	}
	if req.Checkout != "" {
		if why := machine.BranchNameProblem(req.Checkout); why != "" {
			return machine.BranchMissingRefusal(req.Checkout, why)
		}
	}
	return nil
}
