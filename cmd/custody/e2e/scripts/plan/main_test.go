// Package plan holds the CLI contract, as testscript scripts, of plan:
// what it keeps and removes, where its output goes, and the advice it and
// the commands around it print, pasted as printed (testdata/script/*.txtar;
// the commands the scripts have are documented on clitest.RunScripts).
package plan

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
