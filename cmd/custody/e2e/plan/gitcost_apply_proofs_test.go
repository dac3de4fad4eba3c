package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestGitWorkOfApplyProofs: apply proves every head that is no ancestor
// of the first advertised tip in one batch, which both observations of
// every item read (decision 0261): removing 4 trees published only on
// another branch runs the batch's proof questions as often as removing 2,
// and no item asks them again: each removal more costs at most 4 git
// processes (its two observations, its branch's check and deletion).
func TestGitWorkOfApplyProofs(t *testing.T) {
	t.Parallel()
	apply := func(t *testing.T, n int) (perItem int, trace string) {
		r := clitest.InitRepo(t)
		r.Git("checkout", "-q", "-b", "rel")
		r.Commit(r.Dir, "rel.txt", "release\n")
		r.Git("push", "-q", "origin", "rel")
		r.Git("checkout", "-q", "main")
		var ids []string
		for i := range n {
			id, path := clitest.NewTree(t, r, fmt.Sprintf("elsewhere%d", i))
			// Published on rel only: an ancestor of no first tip.
			r.Git("-C", path, "reset", "-q", "--hard", "origin/rel")
			r.Commit(path, "r.txt", fmt.Sprintf("on rel %d\n", i))
			r.Git("-C", path, "push", "-q", "origin", "HEAD:rel")
			clitest.Finish(t, r, id)
			ids = append(ids, id)
		}
		file := clitest.PlanFile(t, r)
		clitest.MustCustody(t, r, 0, "plan", "-o", file)
		res := clitest.MustCustody(t, r, 0, "apply", file, "--json", "--debug")
		for _, it := range clitest.DecodeResult[steps.ApplyResult](t, res, "apply").Items {
			if it.Outcome != machine.OutcomeRemoved {
				t.Fatalf("apply %s: %s, want removed\n%s", it.ID, it.Outcome, res)
			}
		}
		if !slices.ContainsFunc(strings.Split(res.Stderr, "\n"), func(l string) bool { return strings.HasPrefix(l, "+ git -c core.fsmonitor=false") }) {
			t.Fatalf("apply observed no tree:\n%s", res.Stderr)
		}
		// Every git process of the apply: the proof batch runs beside
		// the first observations, so where it falls in the trace varies.
		return clitest.GitRuns(res.Stderr, ""), res.Stderr
	}
	two, twoTrace := apply(t, 2)
	four, fourTrace := apply(t, 4)
	for _, c := range []string{"merge-base", "rev-list --parents", "diff-tree --stdin"} {
		if a, b := clitest.GitRuns(twoTrace, c), clitest.GitRuns(fourTrace, c); a != b || b > 1 {
			t.Errorf("apply ran git %s %d times for 2 removals and %d for 4; want the same, at most once:\n%s", c, a, b, fourTrace)
		}
	}
	// Each removal beyond the first two costs its own work only (two
	// observations, the branch's last check and its deletion): at most 4.
	if per := float64(four-two) / 2; per > 4 {
		t.Errorf("apply ran %d git processes for 2 removals, %d for 4: %.2f for each removal more; want at most 4, the proofs asked once:\n%s",
			two, four, per, fourTrace)
	}
	t.Logf("apply of trees proven on another branch: %d git processes for 2 removals, %d for 4 (%.2f for each removal more)", two, four, float64(four-two)/2)
}
