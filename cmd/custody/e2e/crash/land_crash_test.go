//go:build unix

package crash

// custody land killed at each land/* failpoint (after its intent, after
// its push, after recording the landing) and at the removal's first
// apply/* points, then run again, ends where an uninterrupted landing
// ends: exactly one squash commit on the remote's main, one landed entry
// in a journal that verifies, the tree removed, and a clean doctor. A
// landing held between its integration and its push while the remote's
// main moves is refused by the push's lease, with nothing pushed.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
)

// landWorld is a repository with a tree of two commits and origin's main
// moved on since the tree was made; it returns the tree and the moved tip.
func landWorld(t *testing.T) (r *fixtures.Repo, id, path, moved string) {
	t.Helper()
	r = clitest.InitSpacedRepo(t, fixtures.Options{})
	id, path = clitest.NewTree(t, r, "landing")
	r.Commit(path, "a.txt", "the tree's first\n")
	r.Commit(path, "b.txt", "the tree's second\n")
	moved = r.Commit(r.Dir, "theirs.txt", "main moved on\n")
	r.Git("push", "-q", "origin", "main")
	return r, id, path, moved
}

func TestLandCrash(t *testing.T) {
	var points []string
	for _, p := range steps.Failpoints() {
		if strings.HasPrefix(p, "land/") {
			points = append(points, p)
		}
	}
	if len(points) == 0 {
		t.Fatal("steps.Failpoints() lists no land/ failpoint")
	}
	// The removal that follows a landing is apply's: killed there, the
	// next land finds the record settled by resume.
	points = append(points, "apply/after-intent", "apply/during-delete")
	for _, point := range points {
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r, id, path, moved := landWorld(t)
			killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "land", id, "--squash", "--yes")
			if killed.Code != -1 {
				t.Fatalf("custody land with CUSTODY_FAILPOINT=%s was not killed:\n%s", point, killed)
			}
			// Killed anywhere in the landing, the tree is there; killed
			// before the push, nothing was pushed.
			if strings.HasPrefix(point, "land/") {
				if _, err := os.Stat(filepath.Join(path, "b.txt")); err != nil {
					t.Errorf("killed at %s, the tree lost its work: %v", point, err)
				}
			}
			if point == "land/after-intent" {
				if got := r.GitIn(r.Remote, "rev-parse", "main"); got != moved {
					t.Errorf("killed before the push, origin's main moved to %s", got)
				}
			}
			// An intent with neither landed nor abandoned after it is
			// doctor's to name, with the land that settles it.
			doc := clitest.RunBin(t, clitest.Bin(), r, r.Dir, nil, "doctor")
			pending := point == "land/after-intent" || point == "land/after-push"
			if named := strings.Contains(doc.Stdout+doc.Stderr, "custody land "+id); named != pending || (pending && doc.Code == 0) {
				t.Errorf("killed at %s, doctor (exit %d) names the land to run again: %v, want %v:\n%s", point, doc.Code, named, pending, doc)
			}
			again := clitest.MustCustody(t, r, 0, "land", id, "--squash", "--yes")
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("the tree is still there after the land that followed the kill (%v):\n%s", err, again)
			}
			if st := clitest.RecordState(t, r, id); st != "tombstoned" {
				t.Errorf("the record is %s; want tombstoned\n%s", st, again)
			}
			if n := r.GitIn(r.Remote, "rev-list", "--count", moved+"..main"); n != "1" {
				t.Errorf("origin's main holds %s commits over the moved tip; want exactly one squash commit", n)
			}
			for _, f := range []string{"a.txt", "b.txt", "theirs.txt"} {
				if _, err := r.TryGitIn(r.Remote, "cat-file", "-e", "main:"+f); err != nil {
					t.Errorf("%s is not on origin's main: %v", f, err)
				}
			}
			exp := filepath.Join(r.Root, "journal.jsonl")
			clitest.MustCustody(t, r, 0, "journal", "export", "-o", exp)
			clitest.MustCustody(t, r, 0, "journal", "verify", exp)
			b, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			j := string(b)
			if n := strings.Count(j, `"event":"landed"`); n != 1 {
				t.Errorf("%d landed entries; want 1", n)
			}
			intents, abandoned := strings.Count(j, `"event":"land-intent"`), strings.Count(j, `"event":"land-abandoned"`)
			if intents != abandoned+1 {
				t.Errorf("%d land intents, %d abandoned: every intent but the one that landed must be abandoned", intents, abandoned)
			}
			if point == "land/after-intent" && abandoned != 1 {
				t.Errorf("killed before the push, the intent was not abandoned (%d)", abandoned)
			}
			if landed, removed := strings.Index(j, `"event":"landed"`), strings.Index(j, `"trigger":"remove"`); landed < 0 || removed < landed {
				t.Errorf("the journal does not record the landing before the removal")
			}
			clitest.MustCustody(t, r, 0, "doctor")
		})
	}
}

// TestLandRaced holds a landing between its integration and its push;
// meanwhile another commit lands on origin's main. Released, the push's
// lease refuses: exit 3, land-raced, origin's main is the other commit,
// the tree is active and whole. Run again, it lands on the new tip.
func TestLandRaced(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, path := clitest.NewTree(t, r, "raced")
	r.Commit(path, "a.txt", "the tree's\n")
	release, wait := clitest.Paused(t, r, "land/before-push", "land", id, "--yes")
	other := r.Commit(r.Dir, "theirs.txt", "pushed meanwhile\n")
	r.Git("push", "-q", "origin", "main")
	release()
	res := wait()
	if res.Code != 3 || !strings.Contains(res.Stdout, "[land-raced]") || !strings.Contains(res.Stdout, "nothing was pushed") {
		t.Fatalf("the held land: want exit 3 with land-raced:\n%s", res)
	}
	if got := r.GitIn(r.Remote, "rev-parse", "main"); got != other {
		t.Errorf("origin's main is %s; want the other commit %s, nothing of the held land", got, other)
	}
	if st := clitest.RecordState(t, r, id); st != "active" {
		t.Errorf("the tree is %s; want active", st)
	}
	if _, err := os.Stat(filepath.Join(path, "a.txt")); err != nil {
		t.Errorf("the tree lost its file: %v", err)
	}
	again := clitest.MustCustody(t, r, 0, "land", id, "--rebase", "--yes")
	if _, err := r.TryGitIn(r.Remote, "cat-file", "-e", "main:a.txt"); err != nil {
		t.Errorf("the land after the race did not land:\n%s", again)
	}
}

// TestLandLeaseIsExact: while a fast-forward is held before its push,
// origin's main moves to the tree's own first commit, so a plain push of
// the tree's HEAD would still fast-forward. The lease is on the exact tip
// integrated against, so it refuses all the same: nothing pushed, main
// where the other push left it. Run again, land fast-forwards from there.
func TestLandLeaseIsExact(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, path := clitest.NewTree(t, r, "exact")
	first := r.Commit(path, "a.txt", "first\n")
	head := r.Commit(path, "b.txt", "second\n")
	release, wait := clitest.Paused(t, r, "land/before-push", "land", id, "--yes")
	r.GitIn(path, "push", "-q", "origin", first+":refs/heads/main")
	release()
	res := wait()
	if res.Code != 3 || !strings.Contains(res.Stdout, "[land-raced]") {
		t.Fatalf("the held land: want exit 3 with land-raced:\n%s", res)
	}
	if got := r.GitIn(r.Remote, "rev-parse", "main"); got != first {
		t.Errorf("origin's main is %s; want %s, where the other push left it", got, first)
	}
	clitest.MustCustody(t, r, 0, "land", id, "--yes")
	if got := r.GitIn(r.Remote, "rev-parse", "main"); got != head {
		t.Errorf("after the second land origin's main is %s; want the tree's HEAD %s", got, head)
	}
}
