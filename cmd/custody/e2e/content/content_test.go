package content

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// TestContentAccounting: whatever git's configuration, filters, attributes,
// stat cache, redirected work tree, uninitialised submodule or sparse cone
// make git status say, a tree holding bytes or modes HEAD lacks is kept
// byte for byte, with its admin dir and refs, through plan and apply, with
// the content refusal naming the path; and a tree that truly holds only
// HEAD (a clean sparse checkout) is removed with its commit on origin.
func TestContentAccounting(t *testing.T) {
	t.Parallel()
	for _, c := range fixtures.ContentCases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := clitest.MergedTree(t, r, "content", "topic/content")
			okID, okPath := clitest.MergedTree(t, r, "neighbour", "topic/neighbour")
			c.Make(r, path)
			if st := r.GitIn(path, "status", "--porcelain", "--ignored", "--untracked-files=all"); c.StatusClean && st != "" {
				t.Fatalf("the case is not one git status is blind to; it reports:\n%s", st)
			}
			head := r.Head(path)
			before := clitest.SnapKept(r, id, path)

			file := filepath.Join(r.Root, "p.json")
			p := clitest.PlanTo(t, r, file, 0) // kept or not, a plan was made

			it := clitest.PlanItem(t, p, id)
			if c.Codes == nil {
				if it.Action != "remove" {
					t.Fatalf("clean tree: action %s, refusals %+v, want remove", it.Action, it.Refusals)
				}
				a := clitest.ApplyFile(t, r, file, 0)
				if len(a.Items) != 2 {
					t.Errorf("apply acted on %+v, want both removed", a.Items)
				}
				clitest.AssertRemovedWithBranch(t, r, id, path)
				clitest.AssertRemovedWithBranch(t, r, okID, okPath)
				if _, err := r.TryGitIn(r.Dir, "merge-base", "--is-ancestor", head, "refs/remotes/origin/content/"+filepath.Base(path)); err != nil {
					if out, err := r.TryGitIn(r.Dir, "ls-remote", "origin", "refs/heads/content/"+filepath.Base(path)); err != nil || len(out) < 40 || out[:40] != head {
						t.Errorf("the removed tree's HEAD %s is not on origin (%q, %v)", head, out, err)
					}
				}
				return
			}
			codes := clitest.RefusalCodes(it.Refusals)
			if it.Action != "keep" || !cmp.Equal(codes, c.Codes) {
				t.Fatalf("action %s, refusals %v, want keep with %v: %+v", it.Action, codes, c.Codes, it.Refusals)
			}
			for _, rf := range it.Refusals {
				if string(rf.Code) == c.Codes[len(c.Codes)-1] && (rf.Path == "" || rf.Retry == "") {
					t.Errorf("refusal %+v names no path or retry", rf)
				}
			}
			a := clitest.ApplyFile(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			clitest.AssertRemovedWithBranch(t, r, okID, okPath)
			clitest.AssertKept(t, r, id, path, before, clitest.DropRefLine(before.Refs, "refs/heads/custody/"+okID))
			if st := clitest.State(t, r, id); st != "finished" {
				t.Errorf("kept record is %s, want finished", st)
			}
		})
	}
}

// TestContentChangedAfterPlan: bytes rewritten after plan, in a way git
// status cannot see (same size, same mtime, stat checks relaxed), are seen
// by apply's final observation: the tree is kept with its new bytes.
func TestContentChangedAfterPlan(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"README", "content.txt"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := clitest.MergedTree(t, r, "content", "topic/content")
			r.StatBlind(path, name)
			file := filepath.Join(r.Root, "p.json")
			if it := clitest.PlanItem(t, clitest.PlanTo(t, r, file, 0), id); it.Action != "remove" {
				t.Fatalf("clean tree: action %s, refusals %+v", it.Action, it.Refusals)
			}
			old, err := os.ReadFile(filepath.Join(path, name))
			if err != nil {
				t.Fatal(err)
			}
			r.BlindRewrite(path, name, strings.ToUpper(string(old)))
			if st := r.GitIn(path, "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
				t.Fatalf("git status is not blind to the rewrite:\n%s", st)
			}
			before := clitest.SnapKept(r, id, path)
			a := clitest.ApplyFile(t, r, file, 3)
			if len(a.Items) != 1 || a.Items[0].Outcome != "stale" {
				t.Errorf("apply: %+v, want the item stale", a.Items)
			}
			clitest.AssertKept(t, r, id, path, before, before.Refs)
			if st := clitest.State(t, r, id); st != "finished" {
				t.Errorf("kept record is %s, want finished", st)
			}
		})
	}
}

// TestContentWarmCache: git settings and filters that make git status
// blind to changed bytes give the same verdict, fingerprint included,
// with a content hash cache warmed on the tree before the change as with
// no cache: core.checkStat=minimal or core.trustctime=false with a
// same-size rewrite whose mtime is put back (touch -d), an assume-unchanged
// file rewritten, a clean filter that maps the new bytes to HEAD's blob.
// Before the change the tree is removable and the cache holds its files.
func TestContentWarmCache(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(r *fixtures.Repo, path string) // before the cache is warmed
		make  func(r *fixtures.Repo, path string) // the change the cache must not hide
		codes []string
	}{
		{"CheckStatMinimalTrustCtimeFalse", func(r *fixtures.Repo, path string) {
			r.StatBlind(path, "README")
		}, func(r *fixtures.Repo, path string) {
			r.BlindRewrite(path, "README", strings.ToUpper(clitest.ReadFile(r.TB, filepath.Join(path, "README"))))
		}, []string{"content-differs"}},
		{"TrustCtimeFalse", func(r *fixtures.Repo, path string) {
			r.StatBlind(path, "README")
			r.GitIn(path, "config", "--unset", "core.checkStat")
		}, func(r *fixtures.Repo, path string) {
			r.BlindRewrite(path, "README", strings.ToUpper(clitest.ReadFile(r.TB, filepath.Join(path, "README"))))
		}, []string{"content-differs"}},
		{"AssumeUnchanged", func(*fixtures.Repo, string) {}, func(r *fixtures.Repo, path string) {
			r.GitIn(path, "update-index", "--assume-unchanged", "README")
			r.BlindRewrite(path, "README", strings.ToUpper(clitest.ReadFile(r.TB, filepath.Join(path, "README"))))
		}, []string{"assume-unchanged"}},
		{"CleanFilter", func(r *fixtures.Repo, path string) {
			r.Git("config", "filter.strip.clean", "sed -e /^OUTPUT/d")
			if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "attributes"), []byte("*.ipynb filter=strip\n"), 0o644); err != nil {
				r.TB.Fatal(err)
			}
			r.Commit(path, "analysis.ipynb", "cell 1\n")
			r.Push(path, "topic/content")
		}, func(r *fixtures.Repo, path string) {
			r.WriteFile(path, "analysis.ipynb", "cell 1\nOUTPUT only on disk\n")
			r.GitIn(path, "add", "analysis.ipynb")
		}, []string{"content-differs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := clitest.MergedTree(t, r, "content", "topic/content")
			if ok, _ := observe.StampsTrusted(path); !ok {
				t.Skip("the test directory's filesystem is not one the content hash cache trusts")
			}
			c.setup(r, path)
			// Only files left alone for the racy-clean margin are cached.
			time.Sleep(machine.HashCacheMargin + 300*time.Millisecond)
			file := filepath.Join(r.Root, "p.json")
			if it := clitest.PlanItem(t, clitest.PlanTo(t, r, file, 0), id); it.Action != "remove" {
				t.Fatalf("before the change: action %s, refusals %+v, want remove", it.Action, it.Refusals)
			}
			cache := filepath.Join(r.Dir, ".git", "custody", "cache", id+".hashes")
			if fi, err := os.Stat(cache); err != nil || fi.Size() < 200 {
				t.Fatalf("plan left no cache of the tree's files at %s (%v)", cache, err)
			}
			c.make(r, path)
			if st := r.GitIn(path, "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
				t.Fatalf("git status is not blind to the change:\n%s", st)
			}
			warm := clitest.PlanItem(t, clitest.PlanTo(t, r, file, 0), id)
			if err := os.RemoveAll(filepath.Dir(cache)); err != nil {
				t.Fatal(err)
			}
			cold := clitest.PlanItem(t, clitest.PlanTo(t, r, file, 0), id)
			if got := clitest.RefusalCodes(warm.Refusals); warm.Action != "keep" || !cmp.Equal(got, c.codes) {
				t.Errorf("warm cache: action %s, refusals %v, want keep with %v", warm.Action, got, c.codes)
			}
			if warm.Action != cold.Action || !cmp.Equal(clitest.RefusalCodes(warm.Refusals), clitest.RefusalCodes(cold.Refusals)) || warm.Fingerprint != cold.Fingerprint {
				t.Errorf("warm cache: %s %v %s; no cache: %s %v %s", warm.Action, clitest.RefusalCodes(warm.Refusals), warm.Fingerprint,
					cold.Action, clitest.RefusalCodes(cold.Refusals), cold.Fingerprint)
			}
		})
	}
}
