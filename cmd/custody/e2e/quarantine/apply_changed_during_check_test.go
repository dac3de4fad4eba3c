package quarantine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestApplyDirSwappedDuringCheck: while the quarantine's check reads
// the files of a later directory (zz/, held at apply/during-check), a person moves
// an earlier, already checked directory (d/) out of the tree and leaves a
// symlink to it in its place. What is then deleted must still be in the
// tree: the files of d/, now outside it, are not deleted through the link.
func TestApplyDirSwappedDuringCheck(t *testing.T) {
	t.Parallel()
	r, _, _, q, plan := rtTree(t, "race")
	out := filepath.Join(r.Root, "outside-d")

	var names []string
	res := rtDuringCheck(t, r, plan, q, func() bool {
		// The check has read d/ and is about to read zz/.
		if err := os.Rename(filepath.Join(q, "d"), out); err != nil {
			return false
		}
		_ = os.Symlink(out, filepath.Join(q, "d"))
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return true
	})
	ents, _ := os.ReadDir(out)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, names) {
		t.Errorf("apply deleted files outside the tree through a symlink swapped in for d/: %s held %v, now %v (apply exit %d)\n%s",
			out, names, left, res.Code, res)
	}
}

// zzFiles is how many files rtTree puts in zz/, the directory the
// quarantine's check reads after d/.
const zzFiles = 3

// zzLast is the last of them, relative to the tree.
var zzLast = fmt.Sprintf("zz/f%04d.txt", zzFiles-1)

// rtTree makes a finished, published tree holding d/a.txt, d/b.txt and
// zzFiles files in zz/ (which the quarantine's check reads after d/), plans
// its removal, and returns its id, path, quarantine and the plan file.
func rtTree(t *testing.T, name string) (r *fixtures.Repo, id, path, q, plan string) {
	t.Helper()
	r = clitest.InitRepo(t)
	id, path = clitest.NewTree(t, r, name)
	r.WriteFile(path, "d/a.txt", "a\n")
	r.WriteFile(path, "d/b.txt", "b\n")
	for i := range zzFiles {
		r.WriteFile(path, fmt.Sprintf("zz/f%04d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	r.CommitAll(path, "work")
	r.Push(path, "pub/"+name)
	clitest.Finish(t, r, id)
	_, plan = clitest.PlanNow(t, r, 0)
	return r, id, path, filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id), plan
}

// rtDuringCheck applies plan held at the pause point apply/during-check
// (the check of quarantine q has read d/ and not yet zz/), runs act there,
// and returns apply's result. act must do its work.
func rtDuringCheck(t *testing.T, r *fixtures.Repo, plan, q string, act func() bool) clitest.Result {
	t.Helper()
	release, wait := clitest.Paused(t, r, "apply/during-check", "apply", plan, "--json")
	if _, err := os.Lstat(q); err != nil {
		release()
		t.Fatalf("held during the check, but the tree is not in quarantine: %v\n%s", err, wait())
	}
	ok := act()
	release()
	res := wait()
	if !ok {
		t.Fatalf("the change could not be made during the check:\n%s", res)
	}
	return res
}

// TestApplyWriteDuringCheck: while the quarantine's check reads zz/,
// a person writes a file into d/, already checked. The file is kept, and
// the tree comes back whole (every directory is listed again before the
// first deletion), its .git file in place, with a refusal naming the file
// and saying nothing was deleted (or, had the write landed only after the
// deletion began, that what was deleted was restored).
func TestApplyWriteDuringCheck(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtTree(t, "write")
	res := rtDuringCheck(t, r, plan, q, func() bool {
		return os.WriteFile(filepath.Join(q, "d", "mine.txt"), []byte("mine\n"), 0o644) == nil
	})
	ref := clitest.RefusedIn(t, res, id)
	clitest.WantFile(t, filepath.Join(path, "d", "mine.txt"), "mine\n")
	missing := 0
	for _, f := range []string{".git", "d/a.txt", "zz/f0000.txt", zzLast} {
		if _, err := os.Lstat(filepath.Join(path, f)); err != nil {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("the tree came back with %d of 4 sampled files (.git among them) gone: %+v", missing, ref)
	}
	if ref.Code != "quarantine-changed" || ref.Path != filepath.Join(path, "d", "mine.txt") ||
		!strings.Contains(ref.Message, "nothing of it deleted") && !strings.Contains(ref.Message, "restored") {
		t.Errorf("refusal %+v, want quarantine-changed naming %s and saying what was deleted", ref, filepath.Join(path, "d", "mine.txt"))
	}
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		t.Errorf("the tree came back without its .git (%v), so git no longer knows it: %+v", err, ref)
	}
	clitest.KeptOrRemoved(t, r, id, path, q)
}

// TestApplyEditDuringCheck: while the quarantine's check reads zz/,
// a person rewrites d/a.txt, already checked, in place. Its verification
// right before its deletion reads it again: it is kept with the new bytes,
// and the tree comes back with its .git.
func TestApplyEditDuringCheck(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtTree(t, "edit")
	res := rtDuringCheck(t, r, plan, q, func() bool {
		f, err := os.OpenFile(filepath.Join(q, "d", "a.txt"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return false
		}
		_, err = f.WriteString("edited\n")
		return f.Close() == nil && err == nil
	})
	ref := clitest.RefusedIn(t, res, id)
	if ref.Code != "quarantine-changed" {
		t.Errorf("refusal %+v, want quarantine-changed", ref)
	}
	clitest.WantFile(t, filepath.Join(path, "d", "a.txt"), "edited\n")
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		t.Errorf("the tree came back without its .git: %v", err)
	}
	clitest.KeptOrRemoved(t, r, id, path, q)
}

// TestApplyWriteDuringDelete: apply is held right after its first
// deletion in the quarantine, and a person writes a file into d/ (which
// the check already read). The tree moves back a git worktree: its .git
// file was never deleted, every tracked file already deleted is checked
// out again, and the refusal says how many were deleted and that they
// were restored; the person's file is there with its bytes, and git sees
// nothing else changed.
func TestApplyWriteDuringDelete(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtTree(t, "writedel")
	release, wait := clitest.Paused(t, r, "apply/during-delete", "apply", plan, "--json")
	if err := os.WriteFile(filepath.Join(q, "d", "mine.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release()
	ref := clitest.RefusedIn(t, wait(), id)
	t.Logf("refusal: %s (retry %s)", ref.Message, ref.Retry)
	if ref.Code != "quarantine-changed" || ref.Path != filepath.Join(path, "d", "mine.txt") {
		t.Errorf("refusal %+v, want quarantine-changed naming %s", ref, filepath.Join(path, "d", "mine.txt"))
	}
	if !strings.Contains(ref.Message, "already deleted") || !strings.Contains(ref.Message, "identical to HEAD") || !strings.Contains(ref.Message, "restored") {
		t.Errorf("the refusal does not say what was deleted and restored: %s", ref.Message)
	}
	clitest.WantFile(t, filepath.Join(path, "d", "mine.txt"), "mine\n")
	clitest.WantFile(t, filepath.Join(path, "d", "a.txt"), "a\n")
	clitest.WantFile(t, filepath.Join(path, filepath.FromSlash(zzLast)), fmt.Sprintf("file %d\n", zzFiles-1))
	if st := r.GitIn(path, "status", "--porcelain"); st != "?? d/mine.txt" {
		t.Errorf("git status in the tree put back: %q, want only the person's file", st)
	}
	clitest.KeptOrRemoved(t, r, id, path, q)
}

// TestApplyChangedDuringCheck: while the quarantine's check reads
// zz/, a person changes d/, already checked: a hard link added, a
// directory made, a.txt replaced under its name by a file with its very
// bytes, a.txt moved out of the tree. Each stops the removal before
// anything is deleted: the tree comes back whole, its .git file in place,
// and nothing the person made or moved is lost.
func TestApplyChangedDuringCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		act    func(r *fixtures.Repo, q string) error
		stray  string
		verify func(t *testing.T, r *fixtures.Repo, path string)
	}{
		{name: "hard-link", stray: "d/a2.txt", act: func(_ *fixtures.Repo, q string) error {
			return os.Link(filepath.Join(q, "d", "a.txt"), filepath.Join(q, "d", "a2.txt"))
		}, verify: func(t *testing.T, _ *fixtures.Repo, path string) {
			clitest.WantFile(t, filepath.Join(path, "d", "a2.txt"), "a\n")
		}},
		{name: "dir-made", stray: "d/new", act: func(_ *fixtures.Repo, q string) error {
			return os.Mkdir(filepath.Join(q, "d", "new"), 0o755)
		}, verify: func(t *testing.T, _ *fixtures.Repo, path string) {
			if fi, err := os.Lstat(filepath.Join(path, "d", "new")); err != nil || !fi.IsDir() {
				t.Errorf("the directory made is gone: %v", err)
			}
		}},
		{name: "replaced-same-bytes", stray: "d/a.txt", act: func(r *fixtures.Repo, q string) error {
			tmp := filepath.Join(r.Root, "a-copy")
			if err := os.WriteFile(tmp, []byte("a\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, filepath.Join(q, "d", "a.txt"))
		}, verify: func(t *testing.T, _ *fixtures.Repo, path string) {
			clitest.WantFile(t, filepath.Join(path, "d", "a.txt"), "a\n")
		}},
		{name: "moved-out", stray: "d/a.txt", act: func(r *fixtures.Repo, q string) error {
			return os.Rename(filepath.Join(q, "d", "a.txt"), filepath.Join(r.Root, "a-moved"))
		}, verify: func(t *testing.T, r *fixtures.Repo, _ string) {
			clitest.WantFile(t, filepath.Join(r.Root, "a-moved"), "a\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, id, path, q, plan := rtTree(t, "chg")
			res := rtDuringCheck(t, r, plan, q, func() bool { return c.act(r, q) == nil })
			ref := clitest.RefusedIn(t, res, id)
			if ref.Code != "quarantine-changed" || ref.Path != filepath.Join(path, filepath.FromSlash(c.stray)) {
				t.Errorf("refusal %+v, want quarantine-changed naming %s", ref, c.stray)
			}
			for _, f := range []string{".git", "d/b.txt", "zz/f0000.txt", zzLast} {
				if _, err := os.Lstat(filepath.Join(path, f)); err != nil {
					t.Errorf("the tree came back without %s: %v (%s)", f, err, ref.Message)
				}
			}
			c.verify(t, r, path)
			clitest.KeptOrRemoved(t, r, id, path, q)
		})
	}
}
