package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// relocationTarget returns where rec is to be moved: raw ("" for the
// managed root's <root>/<id>), cleaned and canonicalized through its
// nearest existing ancestor. It refuses a destination that lies under a
// symlink, under something that is not a directory, inside the repository's
// git directory, inside the tree itself, or inside another worktree (the
// main checkout counts, except for the managed root within it).
func relocationTarget(ctx context.Context, e *Env, rec machine.Record, raw string) (string, *machine.Refusal, error) {
	dst := filepath.Join(e.Root, rec.ID)
	if raw != "" {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return "", nil, fmt.Errorf("resolve the destination %s: %w", raw, err)
		}
		dst = abs
	}
	dst = filepath.Clean(dst)
	refuse := func(r *machine.Refusal) (string, *machine.Refusal, error) {
		return "", r, nil
	}
	existing, rest := dst, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	if existing != dst {
		// The destination itself does not exist: its nearest ancestor must
		// be a real directory.
		real, err := filepath.EvalSymlinks(existing)
		if err != nil {
			return refuse(machine.DestinationUnresolvedRefusal(rec.ID, dst, existing, err))
		}
		if real != existing {
			return refuse(machine.DestinationUnderSymlinkRefusal(rec.ID, dst, existing, real))
		}
		if fi, err := os.Stat(existing); err != nil || !fi.IsDir() {
			return refuse(machine.DestinationParentNotDirectoryRefusal(rec.ID, dst, existing))
		}
		dst = filepath.Join(real, rest)
	} else if parent, err := filepath.EvalSymlinks(filepath.Dir(dst)); err != nil || parent != filepath.Dir(dst) {
		return refuse(machine.DestinationParentSymlinkRefusal(rec.ID, dst))
	}
	if dst == rec.Path {
		return dst, nil, nil
	}
	if within(dst, rec.Path) {
		return refuse(machine.DestinationInTreeRefusal(rec.ID, dst, rec.Path))
	}
	if within(dst, e.Repo.CommonDir) {
		return refuse(machine.DestinationInGitDirRefusal(rec.ID, dst))
	}
	inv, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return "", nil, err
	}
	for i, ent := range inv.Entries {
		if ent.Bare || filepath.Clean(ent.Path) == rec.Path || !within(dst, ent.Path) {
			continue
		}
		if i == 0 && within(dst, e.Root) && dst != e.Root {
			continue // the managed root is the one allowed place inside the main checkout
		}
		return refuse(machine.DestinationInWorktreeRefusal(rec.ID, dst, ent.Path))
	}
	return dst, nil, nil
}
