package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

func TestMigrateExplore(t *testing.T) {
	l := fixtures.NewLegacy(t)
	res := custody(t, l.Repo, "migrate", "discover")
	t.Log(res)
	res = custody(t, l.Repo, "migrate", "plan", "-o", "m.json")
	t.Log(res)
	b, _ := os.ReadFile(filepath.Join(l.Dir, "m.json"))
	p, err := machine.ParseMigratePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Candidates {
		t.Logf("%s %s %+v %v", c.Audit.ID, c.Proposal.Disposition, c.Proposal, refusalCodes(c.Audit.Refusals))
		d := []string{"migrate", "dispose", c.Audit.ID, "--approve", "--digest", c.Digest}
		if c.Proposal.Disposition == "" {
			d = []string{"migrate", "dispose", c.Audit.ID, "--reject", "kept", "--digest", c.Digest}
		}
		t.Log(custody(t, l.Repo, d...))
	}
	t.Log(custody(t, l.Repo, "migrate", "apply", "m.json", "--allow-external-retirement"))
	t.Log(custody(t, l.Repo, "migrate", "status"))
	_ = steps.MigrateFailpoints
}
