// Package features holds the CLI contract, as testscript scripts, of
// making and moving trees: new, adopt, relocate, path, switch and
// shell-init, config, the words completion asks for (__complete), the
// agent hooks and integrate (testdata/script/*.txtar; the commands the
// scripts have are documented on clitest.RunScripts). Archives,
// migration, resources, teardown, sweep and land are in scripts/archives.
package features

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
