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
	retry := machine.CommandOn([]string{"custody", "relocate"}, rec.ID) + " --to DIR"
	refuse := func(code machine.Code, format string, args ...any) (string, *machine.Refusal, error) {
		return "", &machine.Refusal{Code: code, Path: dst, Retry: retry,
			Message: machine.EscapeControl(fmt.Sprintf(format, args...)) + "; nothing was moved: name another destination"}, nil
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
			return refuse(machine.CodeUnsafeTarget, "the destination's parent %s cannot be resolved: %v", existing, err)
		}
		if real != existing {
			return refuse(machine.CodeSymlink, "the destination %s lies under a symlink (%s resolves to %s); custody moves trees only to a real path", dst, existing, real)
		}
		if fi, err := os.Stat(existing); err != nil || !fi.IsDir() {
			return refuse(machine.CodeUnsafeTarget, "the destination's parent %s is not a directory", existing)
		}
		dst = filepath.Join(real, rest)
	} else if parent, err := filepath.EvalSymlinks(filepath.Dir(dst)); err != nil || parent != filepath.Dir(dst) {
		return refuse(machine.CodeSymlink, "the destination %s lies under a symlink; custody moves trees only to a real path", dst)
	}
	if dst == rec.Path {
		return dst, nil, nil
	}
	if within(dst, rec.Path) {
		return refuse(machine.CodeUnsafeTarget, "the destination %s is inside the tree %s itself", dst, rec.Path)
	}
	if within(dst, e.Repo.CommonDir) {
		return refuse(machine.CodeUnsafeTarget, "the destination %s is inside the repository's git directory", dst)
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
		return refuse(machine.CodeUnsafeTarget, "the destination %s is inside the worktree %s", dst, ent.Path)
	}
	return dst, nil, nil
}
