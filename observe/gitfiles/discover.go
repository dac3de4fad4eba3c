package gitfiles

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// Discover identifies the repository containing dir. A bare repository, or
// one whose common dir or main checkout cannot be identified exactly, is a
// *machine.Refusal.
func Discover(ctx context.Context, g *hostio.Git, dir string) (hostio.Repo, error) {
	return discover(ctx, g, dir, true)
}

// discover is Discover, reading git's files first when files is true.
func discover(ctx context.Context, g *hostio.Git, dir string, files bool) (hostio.Repo, error) {
	// A plain working tree is answered from git's files with no process
	// (discoverFromFiles); everything else is asked of git.
	if common, top, ok := discoverFromFiles(dir); ok && files {
		if real, err := filepath.EvalSymlinks(common); err == nil {
			return discovered(ctx, nil, dir, real, top)
		}
	}
	// In a working tree one rev-parse answers all four questions; when it
	// fails (a bare repository, a git directory, no repository) or a path
	// holds a newline, the questions are asked as below, whose answers
	// name what is wrong.
	if r, ok, err := discoverAtOnce(ctx, g, dir); ok {
		return r, err
	}
	// The two flags come first, one line each; everything after them is the
	// common dir, which may itself hold a newline.
	out, err := g.Observe(ctx, dir, "rev-parse", "--is-bare-repository", "--is-inside-work-tree", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		var ee *hostio.ExitError
		if errors.As(err, &ee) {
			return hostio.Repo{}, machine.NotARepositoryRefusal(dir, hostio.FirstLine(strings.TrimSpace(ee.Stderr)))
		}
		return hostio.Repo{}, fmt.Errorf("identify the repository at %s: %w", dir, err)
	}
	bare, rest, ok1 := strings.Cut(string(out), "\n")
	inside, commonDir, ok2 := strings.Cut(rest, "\n")
	commonDir = strings.TrimSuffix(commonDir, "\n")
	if !ok1 || !ok2 || commonDir == "" {
		return hostio.Repo{}, ambiguous(dir, "`git rev-parse` printed %q, not two flags and a path", out)
	}
	lines := []string{commonDir, bare, inside}
	if lines[1] == "true" {
		return hostio.Repo{}, machine.BareRepositoryRefusal(lines[0])
	}
	if lines[2] != "true" {
		return hostio.Repo{}, ambiguous(dir, "%s is inside the git directory, not a working tree", dir)
	}
	common, err := filepath.EvalSymlinks(lines[0])
	if err != nil {
		return hostio.Repo{}, ambiguous(dir, "the common dir %s cannot be resolved: %v", lines[0], err)
	}
	top, err := g.Observe(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return hostio.Repo{}, ambiguous(dir, "the working tree of %s cannot be read: %v", dir, err)
	}
	return discovered(ctx, g, dir, common, strings.TrimSuffix(string(top), "\n"))
}

// discoverAtOnce is Discover's common case in one git process: a working
// tree whose common dir and top level hold no newline, and whose common
// dir resolves. Then ok is true and the result is Discover's; ok false
// means Discover asks its questions one by one.
func discoverAtOnce(ctx context.Context, g *hostio.Git, dir string) (hostio.Repo, bool, error) {
	out, err := g.Observe(ctx, dir, "rev-parse", "--is-bare-repository", "--is-inside-work-tree", "--path-format=absolute", "--git-common-dir", "--show-toplevel")
	if err != nil {
		return hostio.Repo{}, false, nil
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "false" || lines[1] != "true" || lines[2] == "" || lines[3] == "" {
		return hostio.Repo{}, false, nil
	}
	common, err := filepath.EvalSymlinks(lines[2])
	if err != nil {
		return hostio.Repo{}, false, nil
	}
	r, err := discovered(ctx, g, dir, common, lines[3])
	return r, true, err
}

// discovered finishes Discover once the common dir (resolved) and the top
// level of dir are known: the main checkout is the common dir's parent,
// and git's registry must name it first. With g nil (the answer came from
// git's files, which name no core.worktree and no bare repository, so git's
// registry names that parent first) the registry is not listed; its lock is
// still taken and let go, so that discovery waits for a registry change in
// progress exactly as the listing would.
func discovered(ctx context.Context, g *hostio.Git, dir, common, top string) (hostio.Repo, error) {
	toplevel, err := filepath.EvalSymlinks(top)
	if err != nil {
		return hostio.Repo{}, ambiguous(dir, "the working tree of %s cannot be resolved: %v", dir, err)
	}
	if filepath.Base(common) != ".git" {
		return hostio.Repo{}, ambiguous(dir, "the common dir %s is not a main checkout's .git (separate git dir), so the main checkout cannot be identified exactly", common)
	}
	main := filepath.Dir(common)
	var list []byte
	if g == nil {
		var unlock func()
		if unlock, err = RegistryLock(ctx, hostio.Repo{CommonDir: common}, false); err == nil {
			unlock()
			return hostio.Repo{CommonDir: common, MainCheckout: main, Toplevel: toplevel}, nil
		}
	} else {
		list, err = WorktreeList(ctx, g, hostio.Repo{CommonDir: common}, dir)
	}
	var lockRefusal *machine.Refusal
	switch {
	case errors.As(err, &lockRefusal) && (lockRefusal.Code == machine.CodeLockTimeout || lockRefusal.Code == machine.CodeUnsafeTarget):
		return hostio.Repo{}, err // the registry lock's own refusal names its holder, or the link in its place
	case errors.Is(err, safefile.ErrNotDirectory):
		return hostio.Repo{}, err // a link where the state directory belongs
	case err != nil && ctx.Err() != nil:
		return hostio.Repo{}, fmt.Errorf("interrupted while reading the worktree registry: %w", err)
	case err != nil:
		return hostio.Repo{}, ambiguous(dir, "git worktree list failed: %v", err)
	}
	entries, err := ParseWorktreeList(list)
	if err != nil || len(entries) == 0 {
		return hostio.Repo{}, ambiguous(dir, "git worktree list could not be read: %v", err)
	}
	first, err := filepath.EvalSymlinks(entries[0].Path)
	if err != nil || first != main || entries[0].Bare {
		return hostio.Repo{}, ambiguous(dir, "git names %s as the main worktree, but the common dir says %s", entries[0].Path, main)
	}
	return hostio.Repo{CommonDir: common, MainCheckout: main, Toplevel: toplevel}, nil
}

func ambiguous(dir, format string, args ...any) error {
	return machine.AmbiguousRepositoryRefusal(dir, fmt.Sprintf(format, args...))
}
