package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// TestMigrateSchemasValidateOutput: a real migrate plan file of the legacy
// layout validates against docs/schemas/migrate-plan.json, and so do the
// journal lines its migration writes.
func TestMigrateSchemasValidateOutput(t *testing.T) {
	t.Parallel()
	l := fixtures.NewLegacy(t)
	MustCustody(t, l.Repo, 0, "init")
	p := mgPlan(t, l.Repo, "migrate.json")
	b, err := os.ReadFile(filepath.Join(l.Dir, "migrate.json"))
	if err != nil {
		t.Fatal(err)
	}
	ValidateSchema(t, "migrate-plan.json", "the migrate plan file", b)
	mgDisposeAll(t, l.Repo, p)
	res := MustCustody(t, l.Repo, 0, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement")
	ValidateSchema(t, "envelope-ok.json", "migrate apply --json", []byte(res.Stdout))
}
