package observe

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
)

// HiddenState observes what `git status` does not report but removal would
// destroy: assume-unchanged and skip-worktree index entries, staged content
// differing from both HEAD and the working copy, any nested .git below the
// root, per-worktree refs, an operation in progress, and submodules with
// changes or with a HEAD no remote advertises. A part that cannot be
// observed is reported as observation-failed: unknown is never clean.
//
// A skip-worktree entry (a sparse checkout's) that is absent on disk and
// whose index entry status reports equal to HEAD's is not a hazard: nothing
// of it lives in the tree. One present on disk is still reported.
func HiddenState(ctx context.Context, g *hostio.Git, repo hostio.Repo, path, adminKey string, st machine.Status) []machine.Hidden {
	ents, err := ReadIndex(ctx, g, repo, path, adminKey)
	return hiddenState(ctx, g, repo, path, adminKey, st, ents, err)
}

// ReadIndex reads the index of the tree at path, whose admin entry is
// adminKey: the index file itself when custody reads it exactly
// (ReadIndexFile), else `git ls-files -v -s -z`, whose answer or error is
// used.
func ReadIndex(ctx context.Context, g *hostio.Git, repo hostio.Repo, path, adminKey string) ([]gitfiles.IndexEntry, error) {
	if adminKey != "" {
		ents, err := gitfiles.ReadIndexFile(filepath.Join(repo.AdminDir(adminKey), "index"))
		if !errors.Is(err, gitfiles.ErrIndexUnreadable) {
			return ents, err
		}
	}
	out, err := g.Observe(ctx, path, "ls-files", "-v", "-s", "-z")
	if err != nil {
		return nil, err
	}
	return gitfiles.ParseLsFiles(out)
}

// hiddenState is HiddenState over an index already read (ents, or the
// error reading it).
func hiddenState(ctx context.Context, g *hostio.Git, repo hostio.Repo, path, adminKey string, st machine.Status, ents []gitfiles.IndexEntry, err error) []machine.Hidden {
	return hiddenStateWith(ctx, g, repo, path, adminKey, st, ents, err, nestedGit)
}

// hiddenStateWith is hiddenState taking the nested .git entries from
// nested (nestedGit, or what a walk of the tree already found).
func hiddenStateWith(ctx context.Context, g *hostio.Git, repo hostio.Repo, path, adminKey string, st machine.Status, ents []gitfiles.IndexEntry, err error, nested func(root string, gitlinks []string) []machine.Hidden) []machine.Hidden {
	var hs []machine.Hidden
	add := func(code machine.Code, p, detail string) {
		hs = append(hs, machine.Hidden{Code: code, Path: p, Detail: detail})
	}
	changed := map[string]bool{}
	for _, c := range st.Changed {
		changed[c] = true
	}
	var gitlinks []string
	for _, e := range ents {
		switch {
		case e.SkipWorktree():
			full := filepath.Join(path, e.Path)
			switch pi := hostio.Lstat(full); {
			case pi.State == machine.PathAbsent && !changed[e.Path]:
				// Outside the sparse cone and equal to HEAD: not a hazard.
			case pi.State == machine.PathUnknown:
				add(machine.CodeObservationFailed, full, "skip-worktree entry could not be observed: "+pi.Err)
			default:
				add(machine.CodeSkipWorktree, full, "index entry marked skip-worktree: its working copy is not checked")
			}
		case e.AssumeUnchanged():
			add(machine.CodeAssumeUnchanged, filepath.Join(path, e.Path), "index entry marked assume-unchanged: changes to it are invisible to git status")
		}
		if e.Gitlink() && e.Stage == 0 {
			gitlinks = append(gitlinks, e.Path)
		}
	}
	if err != nil {
		add(machine.CodeObservationFailed, path, "index flags could not be read: "+err.Error())
	}
	for _, p := range st.StagedDiffers {
		add(machine.CodeStagedDiffers, filepath.Join(path, p), "staged content differs from both HEAD and the working copy")
	}
	// Every member of the tree's own admin entry is one the catalogue
	// knows (machine.AdminMemberOf): an operation in progress, a
	// per-worktree ref, a lock file or a member custody does not know keeps
	// the tree; submodule repositories (modules/) are named last.
	var admin []machine.Hidden
	if validAdminKey(adminKey) {
		dir := repo.AdminDir(adminKey)
		files, err := gitfiles.ReadAdminEntry(dir)
		if err != nil && (!errors.Is(err, fs.ErrNotExist) || hostio.Lstat(dir).State != machine.PathAbsent) {
			// A missing entry is the registration's to report; a member
			// that went while it was listed is unknown.
			add(machine.CodeObservationFailed, dir, err.Error())
		}
		admin = machine.AdminHidden(dir, path, files)
	}
	for _, h := range admin {
		if h.Code != machine.CodeSubmodules {
			hs = append(hs, h)
		}
	}
	hs = append(hs, nested(path, gitlinks)...)
	for _, sub := range gitlinks {
		hs = append(hs, submodule(ctx, g, filepath.Join(path, sub), st)...)
	}
	// git removes a worktree holding submodules only by force, which custody
	// never uses; and a deinitialized submodule's repository (with commits
	// perhaps nowhere else) lives on in the admin entry's modules/.
	for _, h := range admin {
		if h.Code == machine.CodeSubmodules {
			hs = append(hs, h)
		}
	}
	return hs
}

// validAdminKey reports whether key names one admin entry: a single path
// component.
func validAdminKey(key string) bool {
	return key != "" && key != "." && key != ".." && key == filepath.Base(key)
}

// nestedGit walks the tree without following symlinks and reports every
// .git entry (file, directory or link) below the root, except at the roots
// of registered submodules (which submodule checks). An unreadable
// directory is reported as observation-failed.
func nestedGit(root string, gitlinks []string) []machine.Hidden {
	return newNestedScan(root, gitlinks).scan()
}

// submodule checks one checked-out submodule: changes (its own full status)
// and whether its HEAD is on a ref its remotes advertise.
func submodule(ctx context.Context, g *hostio.Git, dir string, st machine.Status) []machine.Hidden {
	if hostio.Lstat(filepath.Join(dir, ".git")).State != machine.PathPresent {
		return nil // not checked out: nothing of it lives in the tree
	}
	fail := func(what string, err error) []machine.Hidden {
		return []machine.Hidden{{Code: machine.CodeObservationFailed, Path: dir, Detail: what + ": " + err.Error()}}
	}
	var hs []machine.Hidden
	out, err := g.Observe(ctx, dir, statusArgs...)
	if err != nil {
		return fail("submodule status", err)
	}
	sst, err := ParseStatus(out)
	if err != nil {
		return fail("submodule status", err)
	}
	if !sst.Clean() {
		hs = append(hs, machine.Hidden{Code: machine.CodeSubmoduleChanges, Path: dir, Detail: "the submodule has changed, untracked or ignored files"})
	}
	head, err := g.Observe(ctx, dir, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return append(hs, fail("submodule HEAD", err)...)
	}
	h := strings.TrimSpace(string(head))
	top, err := g.Observe(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return append(hs, fail("submodule git dir", err)...)
	}
	sub := hostio.Repo{CommonDir: strings.TrimSpace(string(top)), MainCheckout: dir, Toplevel: dir}
	view, err := proof.Advertise(ctx, g, sub)
	if err != nil {
		return append(hs, fail("submodule remotes", err)...)
	}
	p, err := proof.Ancestry(ctx, g, sub, h, view)
	switch {
	case err != nil:
		hs = append(hs, fail("submodule ancestry", err)...)
	case p == nil:
		detail := "HEAD " + h + " is on no ref its remotes advertise"
		if len(view.Failures) > 0 {
			detail += " (remote " + view.Failures[0].Remote + " did not answer)"
		}
		hs = append(hs, machine.Hidden{Code: machine.CodeSubmoduleUnpushed, Path: dir, Detail: detail})
	}
	return hs
}
