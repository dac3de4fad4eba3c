// Package removal holds the CLI contract, as testscript scripts, of ending
// trees: finish, reopen, apply, remove, abandon and resume (testdata/script/*.txtar;
// the commands the scripts have are documented on clitest.RunScripts).
// plan and the advice it prints are package plan's.
package removal

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
