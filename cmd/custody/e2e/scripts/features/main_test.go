// Package features holds the CLI contract, as testscript scripts, of
// making and moving trees and what hangs off them: new, adopt, relocate,
// path, switch and shell-init, the words completion asks for
// (__complete), archives, migration, resources and teardown, the agent
// hooks and integrate (testdata/script/*.txtar; the commands the scripts
// have are documented on clitest.RunScripts).
package features

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
