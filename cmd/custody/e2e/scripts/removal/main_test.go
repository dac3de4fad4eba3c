// Package removal holds the CLI contract, as testscript scripts, of ending
// trees: finish, reopen, plan, apply, abandon, resume and the advice they
// print (testdata/script/*.txtar; the commands the scripts have are
// documented on clitest.RunScripts).
package removal

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
