package safety

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestExternalTreeNeedsConfirmation: an adopted tree outside the managed
// root (elsewhere on disk, or beside the root under a name that merely
// starts like it) is refused by apply with external-tree and a retry
// naming --allow-external-retirement, byte for byte intact; that retry
// removes it.
func TestExternalTreeNeedsConfirmation(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"elsewhere", "prefix-sibling"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			path := filepath.Join(r.Root, "ext-"+where)
			if where == "prefix-sibling" {
				path = filepath.Join(r.Dir, ".worktrees-other", "ext")
			}
			r.Git("worktree", "add", "-q", "-b", "ext-"+where, path)
			r.Commit(path, "ext.txt", "published\n")
			r.Push(path, "pub/ext-"+where)
			ad := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "adopt", path, "--json"), "adopt")
			clitest.Finish(t, r, ad.ID)
			plan, file := clitest.PlanNow(t, r, 0)
			if it := clitest.PlanItem(t, plan, ad.ID); it.Action != "remove" {
				t.Fatalf("plan %s: %+v", ad.ID, it)
			}
			before := r.Snap(path)
			o := clitest.ApplyOutcome(t, clitest.Apply(t, r, file, 3), ad.ID)
			want := "custody apply --allow-external-retirement --only " + machine.QuoteArg(ad.ID) + " " + machine.QuoteArg(file)
			if o.Refusal == nil || o.Refusal.Code != machine.CodeExternalTree || o.Refusal.Retry != want {
				t.Fatalf("apply %s: %+v, want external-tree with retry %q", ad.ID, o, want)
			}
			if d := before.Diff(r.Snap(path)); d != "" {
				t.Fatalf("the refused tree changed:\n%s", d)
			}
			args := strings.Fields(o.Refusal.Retry)[1:]
			res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, nil, append(args, "--json")...)
			if res.Code != 0 {
				t.Fatalf("the retry %q: %s", o.Refusal.Retry, res)
			}
			if o := clitest.ApplyOutcome(t, clitest.DecodeResult[steps.ApplyResult](t, res, "apply"), ad.ID); o.Outcome != "removed" {
				t.Fatalf("retry: %+v", o)
			}
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("%s: %v, want removed", path, err)
			}
		})
	}
}
