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
// and no item asks them again. The git processes per removal do not grow
// with the number of removals.
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
		all := strings.Split(res.Stderr, "\n")
		first := slices.IndexFunc(all, func(l string) bool { return strings.HasPrefix(l, "+ git -c core.fsmonitor=false") })
		if first < 0 {
			t.Fatalf("apply observed no tree:\n%s", res.Stderr)
		}
		return clitest.GitRuns(strings.Join(all[first:], "\n"), ""), res.Stderr
	}
	two, twoTrace := apply(t, 2)
	four, fourTrace := apply(t, 4)
	for _, c := range []string{"merge-base", "rev-list --parents", "diff-tree --stdin"} {
		if a, b := clitest.GitRuns(twoTrace, c), clitest.GitRuns(fourTrace, c); a != b || b > 1 {
			t.Errorf("apply ran git %s %d times for 2 removals and %d for 4; want the same, at most once:\n%s", c, a, b, fourTrace)
		}
	}
	if four > 2*two || float64(four)/4 > 4 {
		t.Errorf("apply ran %d git processes for its 2 items (%.2f per removal), %d for 4 (%.2f per removal); want at most 4 per removal, not growing:\n%s",
			two, float64(two)/2, four, float64(four)/4, fourTrace)
	}
	t.Logf("apply of trees proven on another branch: %.2f git processes per removal for 2, %.2f for 4", float64(two)/2, float64(four)/4)
}
