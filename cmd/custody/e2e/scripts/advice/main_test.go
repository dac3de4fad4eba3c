// Package advice holds the CLI contract, as testscript scripts, of the
// advice plan and the commands around it print, pasted as printed: a
// duplicate admin entry, a tree moved or deleted by hand, a renamed
// branch, a restored copy, a failing hook (testdata/script/*.txtar; the
// commands the scripts have are documented on clitest.RunScripts).
package advice

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
