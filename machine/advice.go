package machine

import (
	"strings"
)

// The retries of a kept tree's refusals: each is the command a person can
// paste as it is, and running it changes what plan says next (the tree is
// then removable, or kept for another reason). Where the next step is the
// person's own edit, the message says so and the retry is custody plan.

// UnregisterCommand is the command that removes git's registration of
// the worktree at path, whose directory is gone, and no other: git
// worktree remove of a missing directory deletes just that admin entry
// (and refuses a locked one), where git worktree prune would also drop
// the registration of every tree moved without git, with its index and
// HEAD.
func UnregisterCommand(path string) string {
	return Command("git", "worktree", "remove", path)
}

// missingRefusal explains a record whose tree is gone: git still registers
// it (deleted by hand, not pruned), or nothing proves its last known commit
// published and no branch of the tree holds it (a commit its branch holds
// settles the record with the branch kept: DecideSettlement). Its retry
// makes progress, never shows the same advice again: a commit git still
// has gets its branch back on it, so plan settles the record keeping the
// branch; any other is for abandon, which ends the record only once git
// confirms that nothing holds the commit (decision 0020).
func missingRefusal(rec Record, obs WorktreeObservation) Refusal {
	p := rec.Path
	if obs.Registered || obs.AdminPresent {
		return refuse(CodeWorktreeMissing, p, UnregisterCommand(p),
			"%s is gone, but git still registers it. If you moved it, run git worktree repair with its new path instead (that keeps its index and HEAD); else the retry removes this one registration, then custody settles the record, saying what was proven of its commits (never git worktree prune: it drops the registration of every tree moved without git, with its index)", p)
	}
	head := rec.EffectiveHead()
	if Vanished(obs) {
		head = VanishedHead(rec, obs)
	}
	abandon := CommandOn([]string{"custody", "abandon", "--acknowledge-unrecoverable", head}, rec.ID)
	switch {
	case !IsFullCommit(head):
		return refuse(CodeWorktreeMissing, p, CommandOn([]string{"custody", "show"}, rec.ID),
			"%s no longer exists and custody never knew a commit of it; custody will not guess where its work went", p)
	case obs.LastKnownMissing:
		return refuse(CodeWorktreeMissing, p, abandon,
			"%s no longer exists, git no longer has its last known commit %s, and no remote gave it: its work is lost. Abandon ends the record, once git confirms that nothing holds that commit", p, Abbrev(head, ShortCommit))
	case obs.BranchTip == "" && rec.Branch != "" && Vanished(obs):
		return refuse(CodeWorktreeMissing, p, Command("git", "branch", rec.Branch, head),
			"%s no longer exists and nothing proves its last known commit %s published, but git still has it: put the tree's branch %s back on it, and plan settles the record keeping the branch (or, if that work is not wanted, abandon it: %s)", p, Abbrev(head, ShortCommit), rec.Branch, abandon)
	}
	return refuse(CodeWorktreeMissing, p, abandon,
		"%s no longer exists, nothing proves its last known commit %s published and no branch of the tree holds it; if that work is lost, abandon ends the record, once git confirms that nothing holds the commit", p, Abbrev(head, ShortCommit))
}

// notOwnedRefusal explains missing ownership evidence. A tree whose branch
// was renamed or switched names the branch it is on and the command that
// puts custody's branch back.
func notOwnedRefusal(rec Record, obs WorktreeObservation) Refusal {
	p := rec.Path
	if rec.Origin == OriginCreated && obs.Marker == rec.ID && obs.AdminKey == rec.AdminKey &&
		obs.Branch != "" && !obs.Detached && obs.Branch != rec.Branch {
		retry := Command("git", "-C", p, "switch", rec.Branch)
		how := "switch back to it"
		if obs.BranchTip == "" {
			retry = Command("git", "-C", p, "branch", "-m", obs.Branch, rec.Branch)
			how = "rename it back"
		}
		return refuse(CodeNotOwned, p, retry,
			"%s is on branch %s, not custody's %s; custody removes only trees on the branch it made: %s, or remove the tree by hand", p, obs.Branch, rec.Branch, how)
	}
	return refuse(CodeNotOwned, p, CommandOn([]string{"custody", "show"}, rec.ID), "%s lacks custody's ownership evidence (ready marker %q, branch %q)", p, obs.Marker, rec.Branch)
}

// reRecord is the command that records the directory now at a record's
// path as its tree: finishing it again records its device+inode.
func reRecord(rec Record) string {
	if rec.State == StateFinished {
		return CommandOn([]string{"custody", "reopen"}, rec.ID) + " && " + CommandOn([]string{"custody", "finish"}, rec.ID)
	}
	return CommandOn([]string{"custody", "finish"}, rec.ID)
}

// stash is `git stash push` in tree with flags: the stash is kept in the
// repository's refs/stash, shared by every worktree, so nothing is lost
// when the tree goes.
func stash(tree string, flags ...string) string {
	return Command(append([]string{"git", "-C", tree, "stash", "push"}, flags...)...)
}

// stashPaths stashes exactly paths of tree (untracked or ignored files,
// with flag --include-untracked or --all), nothing else the tree holds;
// more than a handful of paths is the person's to sort, so plan.
func stashPaths(tree, flag string, paths []string) string {
	if len(paths) == 0 || len(paths) > 8 {
		return "custody plan"
	}
	return stash(tree, append([]string{flag, "--"}, paths...)...)
}

// pushTo is the command that pushes refspec (a branch, setting its
// upstream when upstream, or HEAD:ref) from tree ("" runs it where the
// person is) to where ev.Push says a remote custody reads will advertise
// it, and where that is, for the message. ok is false when no push is
// known to land there (ev.Push is the zero target).
func pushTo(tree string, ev RemoteEvidence, refspec string, upstream bool) (cmd, to string, ok bool) {
	t := ev.Push
	if t == nil {
		if len(ev.Remotes) == 0 {
			return "", "", false
		}
		r := pushRemote(ev.Remotes)
		t = &PushTarget{Remote: r, Proves: r}
	}
	push := append(gitAt(tree), "push")
	if upstream {
		push = append(push, "-u")
	}
	switch {
	case t.Remote != "" && t.AddAs != "" && t.URL != "":
		return CommandOn(append(gitAt(tree), "remote", "add"), t.AddAs, t.URL) + " && " + CommandOn(push, t.Remote, refspec),
			EscapeControl(t.Remote) + " (its push URL " + EscapeControl(t.URL) + ", which no remote custody reads, is added as remote " + EscapeControl(t.AddAs) + ")", true
	case t.Remote != "":
		to := EscapeControl(t.Remote)
		if t.Proves != "" && t.Proves != t.Remote {
			to += " (it lands where remote " + EscapeControl(t.Proves) + " is read from)"
		}
		return CommandOn(push, t.Remote, refspec), to, true
	case t.URL != "":
		return CommandOn(append(gitAt(tree), "push"), t.URL, refspec), EscapeControl(t.URL) + " (where remote " + EscapeControl(t.Proves) + " is read from)", true
	}
	return "", "", false
}

// hiddenRetry is the retry of hidden state h in the tree of record id: the
// index bits are cleared so status shows what they hid, staged content is
// stashed, a refs/worktree/ ref is kept as branch kept/ID/NAME before it is
// deleted; the rest is the person's to settle (custody plan).
func hiddenRetry(tree, id string, h Hidden) string {
	rel, ok := strings.CutPrefix(h.Path, strings.TrimSuffix(tree, "/")+"/")
	if !ok {
		rel = h.Path
	}
	switch h.Code {
	case CodeAssumeUnchanged:
		return Command("git", "-C", tree, "update-index", "--no-assume-unchanged", "--", rel)
	case CodeSkipWorktree:
		return Command("git", "-C", tree, "update-index", "--no-skip-worktree", "--", rel)
	case CodeStagedDiffers:
		return stash(tree)
	case CodeStaleCacheTree:
		// Entries written again invalidate the cache tree above them.
		list := []string{"git", "-C", tree, "--literal-pathspecs", "ls-files", "-s", "-z"}
		if h.Path != tree {
			list = append(list, "--", rel)
		}
		return Command(list...) + " | " + Command("git", "-C", tree, "update-index", "-z", "--index-info")
	case CodeUnknownAdminFile:
		if r := AdminAsideRetry(h, "custody plan"); r != "" {
			return r
		}
	case CodePerWorktreeRef:
		// refs/worktree/NAME: a branch keeps its commit, then the ref
		// that would die with the tree goes.
		ref, _, _ := strings.Cut(h.Detail, " ")
		if name, ok := strings.CutPrefix(ref, "refs/worktree/"); ok && name != "" && id != "" {
			return Command("git", "-C", tree, "branch", "kept/"+id+"/"+name, ref) + " && " + Command("git", "-C", tree, "update-ref", "-d", ref)
		}
	}
	return "custody plan"
}

// nestedRepository reports whether hidden state names a repository inside
// the tree (a nested .git or submodules), which a stash must not sweep up,
// or index entries git skips (a sparse checkout), which a stash would not
// hold as the person sees them.
func nestedRepository(hs []Hidden) bool {
	for _, h := range hs {
		switch h.Code {
		case CodeNestedGit, CodeSubmodules, CodeSubmoduleChanges, CodeSubmoduleUnpushed, CodeSkipWorktree, CodeAssumeUnchanged:
			return true
		}
	}
	return false
}

// ownRepository reports whether git run in the tree is the tree's own
// repository: git registers the path under the record's admin key and
// does not call it prunable. A tree whose .git file is gone would have
// `git -C tree` act on the repository around it, so no retry runs git
// there then.
func ownRepository(rec Record, obs WorktreeObservation) bool {
	return obs.Registered && obs.AdminKey != "" && obs.AdminKey == rec.AdminKey && !obs.Prunable
}

// pushRemote is the remote a retry pushes to: origin when there is one,
// else the first remote asked.
func pushRemote(remotes []string) string {
	for _, r := range remotes {
		if r == "origin" {
			return r
		}
	}
	return remotes[0]
}

// gitAt is git run in tree, or where the person is when tree is "".
func gitAt(tree string) []string {
	if tree == "" {
		return []string{"git"}
	}
	return []string{"git", "-C", tree}
}
