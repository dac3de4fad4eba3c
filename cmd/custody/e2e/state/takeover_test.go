package state

import (
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

// TestResumeTakeOverFromAnotherHost: an intent whose holder is on another
// host counts as live (custody cannot observe it), so resume leaves it
// in-progress; `resume --take-over ID` is the operator's word that it is
// gone, and the record converges.
func TestResumeTakeOverFromAnotherHost(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=new/after-add"}, "new", "elsewhere")
	if res.Code != -1 {
		t.Fatalf("new was not killed: %s", res)
	}
	s, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.WithIntents()
	if err != nil || len(recs) != 1 {
		t.Fatalf("records with intents: %v %v", recs, err)
	}
	before := recs[0]
	after := before
	in := *before.Intent
	in.Holder.Host = "another-host"
	after.Intent, after.Rev = &in, before.Rev+1
	if err := s.Commit(store.Transition{Before: before, After: after, Trigger: "test"}); err != nil {
		t.Fatal(err)
	}
	res = clitest.Custody(t, r, "resume", "--json")
	if items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items; len(items) != 1 || items[0].Outcome != "in-progress" {
		t.Fatalf("resume with a holder on another host:\n%s", res)
	}
	// Named by a unique id prefix, as any tree may be (docs/decisions/0041).
	res = clitest.MustCustody(t, r, 0, "resume", "--json", "--take-over", "elsewhere")
	if items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items; len(items) != 1 || items[0].Outcome != "activated" {
		t.Fatalf("resume --take-over:\n%s", res)
	}
	rec, err := s.Get(before.ID)
	if err != nil || rec.State != machine.StateActive || rec.Intent != nil {
		t.Errorf("after take-over: %+v %v", rec, err)
	}
	if !strings.Contains(clitest.MustCustody(t, r, 0, "show", before.ID).Stdout, "take-over") {
		t.Errorf("the journal does not show the take-over")
	}
}
