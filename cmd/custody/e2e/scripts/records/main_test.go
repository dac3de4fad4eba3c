// Package records holds the CLI contract, as testscript scripts, of what
// custody keeps and reports: init, list, show, doctor, trust, recovered,
// the journal and the state file, usage errors, output and the man page
// (testdata/script/*.txtar; the commands the scripts have are documented
// on clitest.RunScripts).
package records

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
