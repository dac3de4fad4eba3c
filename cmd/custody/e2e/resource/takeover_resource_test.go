package resource

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// TestResumeTakeOverOfAResource: `resume --take-over` works for every kind,
// not only worktrees. A resource destroy interrupted after its intent, whose
// holder is on another host, is in-progress for resume; `--take-over ID` is
// the operator's word that the holder is gone, and the destroy runs once.
func TestResumeTakeOverOfAResource(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	ext := t.TempDir()
	log := filepath.Join(ext, "log")
	clitest.WriteTrusted(t, r, fmt.Sprintf("[resources.db]\ncreate = '''echo create >> %s'''\ndestroy = '''echo destroy >> %s'''\n", log, log))
	clitest.MustCustody(t, r, 0, "init")
	id, path := clitest.NewTree(t, r, "tk")
	r.Commit(path, "tk.txt", "published\n")
	r.Push(path, "main")
	clitest.MustCustody(t, r, 0, "finish", id)
	plan := filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 0, "plan", "-o", plan)
	if res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=resource/after-destroy-intent"}, "apply", plan); res.Code != -1 {
		t.Fatalf("apply was not killed at the destroy intent:\n%s", res)
	}

	s, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	rid := id + "/db"
	before, err := s.GetResource(rid)
	if err != nil || before.State != machine.StateRemoving || before.Intent == nil {
		t.Fatalf("after the kill: %+v, %v; want removing with a destroy intent", before, err)
	}
	after := before
	in := *before.Intent
	in.Holder.Host = "another-host"
	after.Intent, after.Rev = &in, before.Rev+1
	if err := store.CommitChange(s, store.ResourceTransition{Before: before, After: after, Trigger: "test"}); err != nil {
		t.Fatal(err)
	}

	decode := func(res clitest.Result) steps.ResumeResult {
		t.Helper()
		return clitest.DecodeResult[steps.ResumeResult](t, res, "resume")
	}
	res := clitest.Custody(t, r, "resume", "--json")
	items := decode(res).Items
	if res.Code != 3 || len(items) != 1 || items[0].ID != rid || items[0].Kind != machine.KindResource ||
		items[0].Outcome != machine.OutcomeInProgress || items[0].Refusal == nil ||
		!strings.Contains(items[0].Refusal.Message, "--take-over "+machine.QuoteArg(rid)) {
		t.Fatalf("resume with the destroy held on another host: want %s in-progress (exit 3) naming --take-over, got\n%s", rid, res)
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "destroy") != 0 {
		t.Fatalf("the destroy ran while its holder counted as live: %q", b)
	}
	res = clitest.MustCustody(t, r, 0, "resume", "--json", "--take-over", rid)
	if items := decode(res).Items; len(items) != 1 || items[0].ID != rid || items[0].Outcome != machine.OutcomeDestroyed || items[0].Refusal != nil {
		t.Fatalf("resume --take-over %s: want destroyed, got\n%s", rid, res)
	}
	if e, err := s.GetResource(rid); err != nil || e.State != machine.StateTombstoned || e.Intent != nil {
		t.Errorf("after take-over: %+v, %v", e, err)
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "destroy") != 1 {
		t.Errorf("destroy ran %d times, want once: %q", strings.Count(string(b), "destroy"), b)
	}
}
