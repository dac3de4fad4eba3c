package migrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestMigrateSchemasValidateOutput: a real migrate plan file of the legacy
// layout validates against docs/schemas/migrate-plan.json, and so do the
// journal lines its migration writes.
func TestMigrateSchemasValidateOutput(t *testing.T) {
	t.Parallel()
	l := fixtures.NewLegacy(t)
	clitest.MustCustody(t, l.Repo, 0, "init")
	p := clitest.MigratePlan(t, l.Repo, "migrate.json")
	b, err := os.ReadFile(filepath.Join(l.Dir, "migrate.json"))
	if err != nil {
		t.Fatal(err)
	}
	clitest.ValidateSchema(t, "migrate-plan.json", "the migrate plan file", b)
	clitest.MigrateDisposeAll(t, l.Repo, p)
	res := clitest.MustCustody(t, l.Repo, 0, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement")
	clitest.ValidateSchema(t, "envelope-ok.json", "migrate apply --json", []byte(res.Stdout))
}
