// Package archives holds the CLI contract, as testscript scripts, of what
// outlives a tree or acts on many at once: archives, migration of legacy
// layouts, resources and teardown, sweep and land
// (testdata/script/*.txtar; the commands the scripts have are documented
// on clitest.RunScripts).
package archives

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
