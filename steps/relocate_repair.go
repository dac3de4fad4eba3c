package steps

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// repairRelocation settles a relocation whose tree is at its destination
// though git does not register it there (machine.RelocationHalfMoved): when
// the destination's .git file names the record's own admin entry, `git
// worktree repair DST` registers the tree where it is and relocated fires
// over fresh observations, as for a move git finished. A .git file that
// names anything else is left to the person: the intent stays.
func repairRelocation(ctx context.Context, e *Env, rec machine.Record) ([]ResumeItem, error) {
	in := rec.Intent
	key := rec.AdminKeyOrID()
	if !gitfileNames(in.Destination, e.Repo.AdminDir(key)) {
		return one(rec, machine.OutcomeRefused, machine.RelocatedElsewhereRefusal(rec.ID, in.Destination, e.Repo.AdminDir(key))), nil
	}
	if _, err := gitfiles.ChangeRegistry(ctx, e.Git, e.Repo, "worktree", "repair", in.Destination); err != nil {
		return nil, fmt.Errorf("register %s where git worktree move left it: %w", in.Destination, err)
	}
	return relocationStep(machine.TriggerRelocated, machine.OutcomeRelocated)(ctx, e, rec)
}

// gitfileNames reports whether dir/.git is a gitfile naming admin
// (observe.ReadGitFile), both resolved through their symlinks.
func gitfileNames(dir, admin string) bool {
	target, err := gitfiles.ReadGitFile(filepath.Join(dir, ".git"))
	if err != nil {
		return false
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return real(target) == real(admin)
}
