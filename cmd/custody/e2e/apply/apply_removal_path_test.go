package apply

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// These tests attack apply's removal path: the registry read from git's
// files (observe.TakeRegistryInventory), the scope read once per apply,
// and the quarantine's parallel, verified deletion. Each asserts the honest
// outcome: nothing a person wrote is lost, nothing outside the tree is
// deleted, a refused item says why, and the tree is either fully removed
// and unregistered or kept.

// rtTree makes a finished, published tree holding files in a subdirectory
// (d/a.txt, d/b.txt) beside its top-level file, and plans its removal. It
// returns the repository, the tree's id and path, its quarantine path and
// the plan file.
func rtTree(t *testing.T, name string) (r *fixtures.Repo, id, path, q, plan string) {
	t.Helper()
	r = clitest.InitRepo(t)
	id, path = clitest.NewTree(t, r, name)
	r.WriteFile(path, name+".txt", "work of "+name+"\n")
	r.WriteFile(path, "d/a.txt", "a of "+name+"\n")
	r.WriteFile(path, "d/b.txt", "b of "+name+"\n")
	r.CommitAll(path, "work of "+name)
	r.Push(path, "pub/"+name)
	clitest.Finish(t, r, id)
	p, file := clitest.PlanNow(t, r, 0)
	if it := clitest.PlanItem(t, p, id); it.Action != "remove" {
		t.Fatalf("%s: plan says %s (%+v), want remove", id, it.Action, it.Refusals)
	}
	return r, id, path, filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id), file
}

// TestApplyQuarantineSwaps: right after the tree went into
// quarantine (before its check), an entry of it is swapped: a directory for
// a symlink to the same files moved outside, a file for a symlink or a
// hardlink to a file outside, a new file in a subdirectory. Nothing outside
// the tree is deleted and nothing a person wrote is lost.
func TestApplyQuarantineSwaps(t *testing.T) {
	t.Parallel()
	t.Run("dir-swapped-for-symlink", func(t *testing.T) {
		t.Parallel()
		r, id, path, q, plan := rtTree(t, "swapdir")
		release, wait := clitest.Paused(t, r, "apply/after-quarantine", "apply", plan, "--json")
		out := filepath.Join(r.Root, "outside-d")
		if err := os.Rename(filepath.Join(q, "d"), out); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, filepath.Join(q, "d")); err != nil {
			t.Fatal(err)
		}
		release()
		clitest.RefusedIn(t, wait(), id)
		clitest.WantFile(t, filepath.Join(out, "a.txt"), "a of swapdir\n")
		clitest.WantFile(t, filepath.Join(out, "b.txt"), "b of swapdir\n")
		clitest.KeptOrRemoved(t, r, id, path, q)
	})
	t.Run("file-swapped-for-symlink-outside", func(t *testing.T) {
		t.Parallel()
		r, id, path, q, plan := rtTree(t, "swaplink")
		release, wait := clitest.Paused(t, r, "apply/after-quarantine", "apply", plan, "--json")
		out := filepath.Join(r.Root, "outside.txt")
		r.WriteFile(r.Root, "outside.txt", "work of swaplink\n")
		f := filepath.Join(q, "swaplink.txt")
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, f); err != nil {
			t.Fatal(err)
		}
		release()
		clitest.RefusedIn(t, wait(), id)
		clitest.WantFile(t, out, "work of swaplink\n")
		clitest.KeptOrRemoved(t, r, id, path, q)
	})
	for _, same := range []bool{true, false} {
		name := "hardlink-to-outside-different-bytes"
		if same {
			name = "hardlink-to-outside-same-bytes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "swaphard")
			release, wait := clitest.Paused(t, r, "apply/after-quarantine", "apply", plan, "--json")
			content := "a person's own notes\n"
			if same {
				content = "work of swaphard\n"
			}
			out := filepath.Join(r.Root, "outside.txt")
			r.WriteFile(r.Root, "outside.txt", content)
			f := filepath.Join(q, "swaphard.txt")
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(out, f); err != nil {
				t.Fatal(err)
			}
			release()
			res := wait()
			if !same {
				clitest.RefusedIn(t, res, id)
			} else if res.Code != 0 && res.Code != output.ExitPending {
				t.Fatalf("apply: %s", res)
			}
			// Deleting a link never deletes the file's other name.
			clitest.WantFile(t, out, content)
			clitest.KeptOrRemoved(t, r, id, path, q)
		})
	}
	t.Run("file-written-into-a-subdirectory", func(t *testing.T) {
		t.Parallel()
		r, id, path, q, plan := rtTree(t, "subwrite")
		release, wait := clitest.Paused(t, r, "apply/after-quarantine", "apply", plan, "--json")
		if err := os.WriteFile(filepath.Join(q, "d", "mine.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		release()
		ref := clitest.RefusedIn(t, wait(), id)
		if ref.Code != machine.CodeQuarantineChanged || ref.Path != filepath.Join(path, "d", "mine.txt") {
			t.Errorf("refusal %+v, want quarantine-changed naming %s", ref, filepath.Join(path, "d", "mine.txt"))
		}
		clitest.WantFile(t, filepath.Join(path, "d", "mine.txt"), "mine\n")
		clitest.KeptOrRemoved(t, r, id, path, q)
	})
	t.Run("text-appended-to-the-git-file", func(t *testing.T) {
		t.Parallel()
		r, id, path, q, plan := rtTree(t, "gitfile")
		release, wait := clitest.Paused(t, r, "apply/after-quarantine", "apply", plan, "--json")
		g := filepath.Join(q, ".git")
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		want := string(b) + "# a person's note\n"
		if err := os.WriteFile(g, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		release()
		res := wait()
		if res.Code != output.ExitPending {
			t.Errorf("apply deleted a .git file holding more than git wrote: want exit %d, got\n%s", output.ExitPending, res)
		}
		if clitest.KeptOrRemoved(t, r, id, path, q) {
			t.Errorf("%s was removed with the person's line in its .git file", id)
		} else {
			clitest.WantFile(t, filepath.Join(path, ".git"), want)
		}
	})
}

// TestApplyKilledMidDelete: apply is killed while the quarantine is
// being deleted (some files gone). Before resume a person writes a file
// into a subdirectory of the quarantine, or swaps that subdirectory for a
// symlink to a directory outside holding its remaining files. Resume loses
// neither and deletes nothing outside the tree.
func TestApplyKilledMidDelete(t *testing.T) {
	t.Parallel()
	t.Run("file-written-into-a-subdirectory", func(t *testing.T) {
		t.Parallel()
		r, id, path, q, plan := rtTree(t, "killwrite")
		clitest.MustBeKilled(t, r, "apply/during-delete", "apply", plan)
		if err := os.WriteFile(filepath.Join(q, "d", "mine.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := clitest.Custody(t, r, "resume", "--json")
		if res.Code == 0 {
			t.Errorf("resume: exit 0 although a person's file is in the quarantine:\n%s", res)
		}
		if _, err := os.Lstat(filepath.Join(path, "d", "mine.txt")); err == nil {
			clitest.WantFile(t, filepath.Join(path, "d", "mine.txt"), "mine\n")
		} else {
			clitest.WantFile(t, filepath.Join(q, "d", "mine.txt"), "mine\n")
		}
		if st := clitest.RecordState(t, r, id); st == "tombstoned" {
			t.Errorf("%s tombstoned although a person's file was in it", id)
		}
	})
	t.Run("dir-swapped-for-symlink", func(t *testing.T) {
		t.Parallel()
		r, id, path, q, plan := rtTree(t, "killswap")
		clitest.MustBeKilled(t, r, "apply/during-delete", "apply", plan)
		out := filepath.Join(r.Root, "outside-d")
		if err := os.Rename(filepath.Join(q, "d"), out); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, filepath.Join(q, "d")); err != nil {
			t.Fatal(err)
		}
		before, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		clitest.Custody(t, r, "resume", "--json")
		after, err := os.ReadDir(out)
		if err != nil || len(after) != len(before) {
			t.Errorf("resume deleted files outside the tree: %s held %d entries, now %d (%v)", out, len(before), len(after), err)
		}
		if st := clitest.RecordState(t, r, id); st == "tombstoned" {
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s tombstoned but %s: %v", id, path, err)
			}
		}
	})
}

// rtOtherTree adds a plain git worktree (not custody's) at Root/other and
// returns its path and admin dir.
func rtOtherTree(t *testing.T, r *fixtures.Repo) (path, admin string) {
	t.Helper()
	path = filepath.Join(r.Root, "other")
	r.Git("worktree", "add", "-q", "--detach", path, "HEAD")
	return path, filepath.Join(r.Dir, ".git", "worktrees", "other")
}

// TestApplyOddRegistryEntries: another tree's admin entry is not the
// plain case custody reads itself (its gitdir spelled with a trailing space,
// a CRLF, a relative path; a lock), and it has the removed tree's branch
// checked out. The removal is still verified (the registry falls back to
// git), the other tree and its entry are untouched, and the branch is kept.
func TestApplyOddRegistryEntries(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(t *testing.T, r *fixtures.Repo, other, admin string)
	}{
		{"gitdir-trailing-space", func(t *testing.T, r *fixtures.Repo, other, admin string) {
			rtWriteAdmin(t, admin, "gitdir", filepath.Join(other, ".git")+" \n")
		}},
		{"gitdir-crlf", func(t *testing.T, r *fixtures.Repo, other, admin string) {
			rtWriteAdmin(t, admin, "gitdir", filepath.Join(other, ".git")+"\r\n")
		}},
		{"gitdir-relative", func(t *testing.T, r *fixtures.Repo, other, admin string) {
			rel, err := filepath.Rel(admin, filepath.Join(other, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			rtWriteAdmin(t, admin, "gitdir", rel+"\n")
		}},
		{"locked", func(t *testing.T, r *fixtures.Repo, other, admin string) {
			r.Git("worktree", "lock", "--reason", "on a drive", other)
		}},
		{"plain", func(t *testing.T, r *fixtures.Repo, other, admin string) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "odd")
			other, admin := rtOtherTree(t, r)
			tip := r.BranchTip("custody/" + id)
			// The other tree has the branch checked out (as `git switch
			// --ignore-other-worktrees` would leave it).
			rtWriteAdmin(t, admin, "HEAD", "ref: refs/heads/custody/"+id+"\n")
			c.edit(t, r, other, admin)
			files := rtAdminFiles(t, admin)
			res := clitest.Custody(t, r, "apply", plan, "--json")
			if res.Code != 0 {
				t.Fatalf("apply: want exit 0, got\n%s", res)
			}
			o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
			if o.Outcome != "removed" {
				t.Fatalf("apply %s: %+v, want removed", id, o)
			}
			if !clitest.KeptOrRemoved(t, r, id, path, q) {
				t.Errorf("%s reported removed but kept", id)
			}
			if got := r.BranchTip("custody/" + id); got != tip {
				t.Errorf("branch custody/%s checked out in %s: %q, want kept at %s (outcome %+v)", id, other, got, tip, o.Branch)
			}
			if got := rtAdminFiles(t, admin); !maps.Equal(got, files) {
				t.Errorf("the other tree's admin entry changed:\nbefore %v\nafter  %v", files, got)
			}
			if _, err := os.Stat(filepath.Join(other, ".git")); err != nil {
				t.Errorf("the other tree lost its .git: %v", err)
			}
		})
	}
}

// rtWriteAdmin writes one file of an admin entry.
func rtWriteAdmin(t *testing.T, admin, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(admin, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rtAdminFiles reads the top-level files of an admin entry (name → bytes).
func rtAdminFiles(t *testing.T, admin string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(admin)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != "index" {
			b, err := os.ReadFile(filepath.Join(admin, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(b)
		}
	}
	return out
}

// TestApplyPackedBranch: the owned branch is packed (only in
// packed-refs, or packed with a loose copy) when apply verifies the removal:
// it is deleted by compare-and-swap, leaving neither copy; packed and
// checked out in another tree, it is kept.
func TestApplyPackedBranch(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"packed-only", "packed-and-loose", "packed-checked-out-elsewhere"} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "packed")
			tip := r.BranchTip("custody/" + id)
			r.Git("pack-refs", "--all")
			loose := filepath.Join(r.Dir, ".git", "refs", "heads", "custody", id)
			if _, err := os.Lstat(loose); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("pack-refs left %s: %v", loose, err)
			}
			if c == "packed-and-loose" {
				if err := os.MkdirAll(filepath.Dir(loose), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(loose, []byte(tip+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c == "packed-checked-out-elsewhere" {
				_, admin := rtOtherTree(t, r)
				rtWriteAdmin(t, admin, "HEAD", "ref: refs/heads/custody/"+id+"\n")
			}
			res := clitest.Custody(t, r, "apply", plan, "--json")
			if res.Code != 0 {
				t.Fatalf("apply: want exit 0, got\n%s", res)
			}
			o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
			if o.Outcome != "removed" || !clitest.KeptOrRemoved(t, r, id, path, q) {
				t.Fatalf("apply %s: %+v, want removed", id, o)
			}
			got := r.BranchTip("custody/" + id)
			switch {
			case c == "packed-checked-out-elsewhere" && got != tip:
				t.Errorf("branch checked out in another tree: %q, want kept at %s", got, tip)
			case c != "packed-checked-out-elsewhere" && got != "":
				t.Errorf("branch custody/%s still at %s after its removal (%+v)", id, got, o.Branch)
			}
			if b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "packed-refs")); err == nil &&
				c != "packed-checked-out-elsewhere" && strings.Contains(string(b), "refs/heads/custody/"+id) {
				t.Errorf("packed-refs still names custody/%s", id)
			}
		})
	}
}

// TestApplyDuplicateAdminEntry: a second admin entry (another key)
// names the same tree's path and holds a detached HEAD at a commit nothing
// else reaches. Apply keeps the tree (its final observation, before the
// intent, reads every entry's gitdir), says which entry and what HEAD it
// holds, and its retry, pasted as printed, keeps that commit under a ref and
// moves only that entry out of git's registry (its files kept): the next
// plan removes the tree, and the commit stays reachable.
func TestApplyDuplicateAdminEntry(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtTree(t, "dup")
	lone := r.Git("commit-tree", "-m", "only here", r.Head(path)+"^{tree}")
	dup := filepath.Join(r.Dir, ".git", "worktrees", "dup-entry")
	if err := os.MkdirAll(dup, 0o755); err != nil {
		t.Fatal(err)
	}
	rtWriteAdmin(t, dup, "gitdir", filepath.Join(path, ".git")+"\n")
	rtWriteAdmin(t, dup, "commondir", "../..\n")
	rtWriteAdmin(t, dup, "HEAD", lone+"\n")
	res := clitest.Custody(t, r, "apply", plan, "--json")
	ref := clitest.RefusedIn(t, res, id)
	if ref.Code != machine.CodeDuplicateAdminEntry || !strings.Contains(ref.Message, dup) || !strings.Contains(ref.Message, lone) || !strings.Contains(ref.Message, path) {
		t.Fatalf("apply %s: %+v, want %s naming %s, its HEAD %s and %s", id, ref, machine.CodeDuplicateAdminEntry, dup, lone, path)
	}
	if b, err := os.ReadFile(filepath.Join(dup, "HEAD")); err != nil || strings.TrimSpace(string(b)) != lone {
		t.Errorf("the other entry's HEAD %s was dropped: %q, %v", lone, b, err)
	}
	clitest.WantFile(t, filepath.Join(path, "dup.txt"), "work of dup\n")
	if st := clitest.RecordState(t, r, id); st != "finished" {
		t.Errorf("%s is %s after the refusal, want finished (nothing was done)", id, st)
	}
	clitest.KeptOrRemoved(t, r, id, path, q)
	// Resume has nothing to do: the refusal came before any intent.
	if again := clitest.Custody(t, r, "resume", "--json"); again.Code != 0 {
		t.Errorf("resume after the refusal: %s", again)
	}
	// The retry, pasted as printed.
	if sh := clitest.RunBin(t, "sh", r, r.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", ref.Retry); sh.Code != 0 && sh.Code != output.ExitPending {
		t.Fatalf("the retry %q failed:\n%s", ref.Retry, sh)
	}
	if got := strings.TrimSpace(r.Git("rev-parse", "refs/custody/stray/"+lone)); got != lone {
		t.Fatalf("after the retry refs/custody/stray/%s is %q", lone, got)
	}
	if _, err := os.Lstat(dup); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after the retry the entry %s is still there: %v", dup, err)
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "custody", "stray-entries", "dup-entry", "HEAD")); err != nil || strings.TrimSpace(string(b)) != lone {
		t.Errorf("the entry moved aside lost its HEAD: %q, %v", b, err)
	}
	p, file := clitest.PlanNow(t, r, 0)
	if it := clitest.PlanItem(t, p, id); it.Action != machine.ActionRemove {
		t.Fatalf("after the retry plan keeps %s: %+v", id, it.Refusals)
	}
	clitest.MustCustody(t, r, 0, "apply", file)
	if !clitest.KeptOrRemoved(t, r, id, path, q) {
		t.Errorf("%s was not removed after the retry", id)
	}
	if out := r.Git("for-each-ref", "--contains", lone, "--format=%(refname)"); !strings.Contains(out, "refs/custody/stray/"+lone) {
		t.Errorf("the lone commit %s is reachable from no ref after the removal: %q", lone, out)
	}
}

// TestApplyLockTakenLate: a lock taken on the tree after plan (before
// the intent) or after the intent is respected: the tree is kept, the lock
// and its reason stay. One written after the tree went into quarantine
// keeps at least its reason.
func TestApplyLockTakenLate(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"apply/before-observe", "apply/after-intent", "apply/after-quarantine"} {
		t.Run(strings.TrimPrefix(point, "apply/"), func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "lock")
			release, wait := clitest.Paused(t, r, point, "apply", plan, "--json")
			lock := filepath.Join(r.Dir, ".git", "worktrees", id, "locked")
			// git finds the entry by its path's suffix even while the tree
			// is in quarantine.
			if out, err := r.TryGitIn(r.Dir, "worktree", "lock", "--reason", "on a drive that comes back", path); err != nil {
				t.Fatalf("git worktree lock %s: %v\n%s", path, err, out)
			}
			release()
			res := wait()
			if b, err := os.ReadFile(lock); err != nil || string(b) != "on a drive that comes back\n" {
				t.Errorf("the lock's reason is gone: %q, %v\n%s", b, err, res)
			}
			clitest.RefusedIn(t, res, id)
			clitest.WantFile(t, filepath.Join(path, "lock.txt"), "work of lock\n")
			clitest.KeptOrRemoved(t, r, id, path, q)
		})
	}
}

// TestApplyEnvWrittenAfterPlan: a .env a person writes into the tree
// between plan and apply (a line like custody's own) keeps the tree.
func TestApplyEnvWrittenAfterPlan(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"", "apply/before-observe", "apply/after-intent", "apply/after-quarantine"} {
		t.Run("at-"+strings.ReplaceAll(strings.TrimPrefix(point, "apply/"), "/", "-"), func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "env")
			line := "CUSTODY_PORT=4100\nDATABASE_URL=postgres://mine\n"
			var res clitest.Result
			if point == "" {
				r.WriteFile(path, ".env", line)
				res = clitest.Custody(t, r, "apply", plan, "--json")
			} else {
				release, wait := clitest.Paused(t, r, point, "apply", plan, "--json")
				dir := path
				if point == "apply/after-quarantine" {
					dir = q
				}
				r.WriteFile(dir, ".env", line)
				release()
				res = wait()
			}
			clitest.RefusedIn(t, res, id)
			clitest.WantFile(t, filepath.Join(path, ".env"), line)
			clitest.KeptOrRemoved(t, r, id, path, q)
		})
	}
}

// TestApplyDisposableWithdrawn: two trees hold out/, build output
// only by an approved disposable pattern. Apply reads the patterns once, at
// its first removal; while it is held there, the person withdraws the
// pattern (edits custody.toml, or edits it and approves the new content).
// The second tree's out/ is then a person's ignored file again: it is kept.
func TestApplyDisposableWithdrawn(t *testing.T) {
	t.Parallel()
	for _, reapprove := range []bool{false, true} {
		name := "edited"
		if reapprove {
			name = "edited-and-approved"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			clitest.WriteTrusted(t, r, "[cleanup]\ndisposable = [\"/out/\"]\n")
			var ids, paths []string
			for _, n := range []string{"one", "two"} {
				id, path := clitest.NewTree(t, r, n)
				r.WriteFile(path, ".gitignore", "/out/\n")
				r.CommitAll(path, "ignore out")
				r.Push(path, "pub/"+n)
				r.WriteFile(path, "out/report.html", "report of "+n+"\n")
				clitest.Finish(t, r, id)
				ids, paths = append(ids, id), append(paths, path)
			}
			p, plan := clitest.PlanNow(t, r, 0)
			for _, id := range ids {
				if it := clitest.PlanItem(t, p, id); it.Action != "remove" {
					t.Fatalf("%s: %s (%+v), want remove", id, it.Action, it.Refusals)
				}
			}
			release, wait := clitest.Paused(t, r, "apply/before-observe", "apply", plan, "--json")
			r.WriteFile(r.Dir, "custody.toml", "[cleanup]\ndisposable = []\n")
			if reapprove {
				clitest.MustCustody(t, r, 0, "trust")
			}
			release()
			res := wait()
			a := clitest.ApplyDecoded(t, res)
			first := a.Items[0].ID
			second, path := ids[1], paths[1]
			if first == ids[1] {
				second, path = ids[0], paths[0]
			}
			o := clitest.ApplyOutcome(t, a, second)
			if o.Outcome == "removed" {
				t.Errorf("%s removed with out/ after its pattern was withdrawn: %+v", second, o)
			} else {
				clitest.WantFile(t, filepath.Join(path, "out", "report.html"), "report of "+filepath.Base(path)[:3]+"\n")
			}
		})
	}
}

// TestApplyOwnEntrySpelling: the removed tree's own admin entry
// names its .git with odd spelling (a trailing space, a CRLF, a relative
// path) by the time apply runs. The tree ends fully removed and
// unregistered, or kept with a refusal that says why; never an error after
// the tree is gone.
func TestApplyOwnEntrySpelling(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"trailing-space", "crlf", "relative"} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "own")
			admin := filepath.Join(r.Dir, ".git", "worktrees", id)
			link := filepath.Join(path, ".git")
			switch c {
			case "trailing-space":
				link += " "
			case "crlf":
				link += "\r"
			case "relative":
				rel, err := filepath.Rel(admin, link)
				if err != nil {
					t.Fatal(err)
				}
				link = rel
			}
			rtWriteAdmin(t, admin, "gitdir", link+"\n")
			res := clitest.Custody(t, r, "apply", plan, "--json")
			if res.Code != 0 && res.Code != output.ExitPending {
				t.Fatalf("apply: want exit 0 or 3, got\n%s", res)
			}
			o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
			t.Logf("apply %s: %s %+v", id, o.Outcome, o.Refusal)
			removed := clitest.RecordState(t, r, id) == "tombstoned"
			if c != "relative" {
				// git 2.39 reads a relative gitdir against its own cwd, so
				// it no longer lists the tree at its path whatever custody
				// does; elsewhere the tree must be registered while kept.
				removed = clitest.KeptOrRemoved(t, r, id, path, q)
			}
			switch {
			case removed && o.Outcome != "removed":
				t.Errorf("%s is gone, but apply says %+v", id, o)
			case !removed && (o.Refusal == nil || o.Refusal.Message == ""):
				t.Errorf("%s kept without a reason: %+v", id, o)
			case !removed:
				clitest.WantFile(t, filepath.Join(path, "own.txt"), "work of own\n")
			}
		})
	}
}

// TestApplyMainCheckoutOnTheBranch: the main checkout has the
// removed tree's branch checked out when apply verifies the removal (read
// from <common>/HEAD): the branch is kept.
func TestApplyMainCheckoutOnTheBranch(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtTree(t, "main")
	tip := r.BranchTip("custody/" + id)
	r.Git("symbolic-ref", "HEAD", "refs/heads/custody/"+id)
	res := clitest.Custody(t, r, "apply", plan, "--json")
	if res.Code != 0 {
		t.Fatalf("apply: want exit 0, got\n%s", res)
	}
	if !clitest.KeptOrRemoved(t, r, id, path, q) {
		t.Fatalf("%s kept:\n%s", id, res)
	}
	if got := r.BranchTip("custody/" + id); got != tip {
		t.Errorf("branch custody/%s checked out in the main checkout: %q, want kept at %s", id, got, tip)
	}
}
