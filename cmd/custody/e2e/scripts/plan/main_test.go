// Package plan holds the CLI contract, as testscript scripts, of plan:
// what it keeps and removes and where its output goes
// (testdata/script/*.txtar; the commands the scripts have are documented
// on clitest.RunScripts). The advice it and the commands around it print,
// pasted as printed, is in scripts/advice.
package plan

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
