package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
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
			r := e2eRepo(t, fixtures.Options{})
			id, path := e2eMerged(t, r, "content", "topic/content")
			okID, okPath := e2eMerged(t, r, "neighbour", "topic/neighbour")
			c.Make(r, path)
			if st := r.GitIn(path, "status", "--porcelain", "--ignored", "--untracked-files=all"); c.StatusClean && st != "" {
				t.Fatalf("the case is not one git status is blind to; it reports:\n%s", st)
			}
			head := r.Head(path)
			before := e2eSnapKept(r, id, path)

			file := filepath.Join(r.Root, "p.json")
			p := e2ePlan(t, r, file, 0) // kept or not, a plan was made

			it := planItem(t, p, id)
			if c.Codes == nil {
				if it.Action != "remove" {
					t.Fatalf("clean tree: action %s, refusals %+v, want remove", it.Action, it.Refusals)
				}
				a := e2eApply(t, r, file, 0)
				if len(a.Items) != 2 {
					t.Errorf("apply acted on %+v, want both removed", a.Items)
				}
				e2eAssertRemoved(t, r, id, path)
				e2eAssertRemoved(t, r, okID, okPath)
				if _, err := r.TryGitIn(r.Dir, "merge-base", "--is-ancestor", head, "refs/remotes/origin/content/"+filepath.Base(path)); err != nil {
					if out, err := r.TryGitIn(r.Dir, "ls-remote", "origin", "refs/heads/content/"+filepath.Base(path)); err != nil || len(out) < 40 || out[:40] != head {
						t.Errorf("the removed tree's HEAD %s is not on origin (%q, %v)", head, out, err)
					}
				}
				return
			}
			codes := refusalCodes(it.Refusals)
			if it.Action != "keep" || !cmp.Equal(codes, c.Codes) {
				t.Fatalf("action %s, refusals %v, want keep with %v: %+v", it.Action, codes, c.Codes, it.Refusals)
			}
			for _, rf := range it.Refusals {
				if string(rf.Code) == c.Codes[len(c.Codes)-1] && (rf.Path == "" || rf.Retry == "") {
					t.Errorf("refusal %+v names no path or retry", rf)
				}
			}
			a := e2eApply(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			e2eAssertRemoved(t, r, okID, okPath)
			e2eAssertKept(t, r, id, path, before, e2eDropRef(before.refs, "refs/heads/custody/"+okID))
			if st := e2eState(t, r, id); st != "finished" {
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
			r := e2eRepo(t, fixtures.Options{})
			id, path := e2eMerged(t, r, "content", "topic/content")
			r.StatBlind(path, name)
			file := filepath.Join(r.Root, "p.json")
			if it := planItem(t, e2ePlan(t, r, file, 0), id); it.Action != "remove" {
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
			before := e2eSnapKept(r, id, path)
			a := e2eApply(t, r, file, 3)
			if len(a.Items) != 1 || a.Items[0].Outcome != "stale" {
				t.Errorf("apply: %+v, want the item stale", a.Items)
			}
			e2eAssertKept(t, r, id, path, before, before.refs)
			if st := e2eState(t, r, id); st != "finished" {
				t.Errorf("kept record is %s, want finished", st)
			}
		})
	}
}
